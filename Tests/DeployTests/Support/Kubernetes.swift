/// The parts of Kubernetes objects the deploy tests read, decoded from the manifests' JSON
/// form. Fields the tests do not read are not declared (and so are ignored), and every field
/// is optional where Kubernetes allows it to be absent, so that a missing one is reported by
/// an expectation rather than a decoding error.
enum Kubernetes {
    /// `metadata` of any object.
    struct Metadata: Decodable, Sendable {
        /// The object's name.
        let name: String
        /// Its labels.
        let labels: [String: String]?
    }

    /// The fields every object has.
    struct Header: Decodable, Sendable {
        /// e.g. `apps/v1`.
        let apiVersion: String?
        /// e.g. `Deployment`.
        let kind: String?
        /// Name and labels.
        let metadata: Metadata?
    }

    /// A label selector with `matchLabels` only, as the manifests use.
    struct LabelSelector: Decodable, Sendable {
        /// Labels a pod must carry.
        let matchLabels: [String: String]?
    }

    /// A `Deployment` (apps/v1).
    struct Deployment: Decodable, Sendable {
        /// Its spec.
        struct Spec: Decodable, Sendable {
            /// How many pods.
            let replicas: Int?
            /// `Recreate` or `RollingUpdate`.
            let strategy: Strategy?
            /// Which pods it owns.
            let selector: LabelSelector?
            /// The pod template.
            let template: PodTemplate
        }

        /// How pods are replaced on an update.
        struct Strategy: Decodable, Sendable {
            /// `Recreate` or `RollingUpdate`.
            let type: String?
        }

        /// The name and labels.
        let metadata: Metadata
        /// The spec.
        let spec: Spec

        /// The pod's containers.
        var containers: [Container] { spec.template.spec.containers }
    }

    /// A pod template.
    struct PodTemplate: Decodable, Sendable {
        /// The pod's labels (and nothing else of its metadata).
        struct TemplateMetadata: Decodable, Sendable {
            /// The pod's labels.
            let labels: [String: String]?
        }

        /// The pod's labels.
        let metadata: TemplateMetadata?
        /// The pod spec.
        let spec: PodSpec
    }

    /// A pod spec.
    struct PodSpec: Decodable, Sendable {
        /// The pod-level security context.
        struct SecurityContext: Decodable, Sendable {
            /// Whether the kubelet refuses to run a container as root.
            let runAsNonRoot: Bool?
        }

        /// The containers.
        let containers: [Container]
        /// The volumes.
        let volumes: [Volume]?
        /// The pod-level security context.
        let securityContext: SecurityContext?
        /// How long the pod gets after SIGTERM.
        let terminationGracePeriodSeconds: Int?
    }

    /// A container.
    struct Container: Decodable, Sendable {
        /// One port.
        struct Port: Decodable, Sendable {
            /// The port number.
            let containerPort: Int
            /// Its name, which a Service's `targetPort` may use.
            let name: String?
        }

        /// Where a volume is mounted.
        struct VolumeMount: Decodable, Sendable {
            /// The volume's name.
            let name: String
            /// The path inside the container.
            let mountPath: String
        }

        /// The container's name.
        let name: String
        /// The image.
        let image: String?
        /// The entry point; the executable is its first element.
        let command: [String]?
        /// The arguments.
        let args: [String]?
        /// The ports.
        let ports: [Port]?
        /// The environment.
        let env: [EnvVar]?
        /// The readiness probe.
        let readinessProbe: Probe?
        /// The liveness probe.
        let livenessProbe: Probe?
        /// The startup probe.
        let startupProbe: Probe?
        /// The mounts.
        let volumeMounts: [VolumeMount]?
    }

    /// One environment variable: a literal value or a reference.
    struct EnvVar: Decodable, Sendable {
        /// Where a value comes from.
        struct Source: Decodable, Sendable {
            /// A key of a Secret.
            let secretKeyRef: KeyReference?
            /// A key of a ConfigMap.
            let configMapKeyRef: KeyReference?
        }

        /// The variable's name.
        let name: String
        /// A literal value.
        let value: String?
        /// A reference instead of a value.
        let valueFrom: Source?
    }

    /// A key of a named Secret or ConfigMap.
    struct KeyReference: Decodable, Sendable {
        /// The object's name.
        let name: String
        /// The key in it.
        let key: String
    }

    /// A probe. Exactly one handler should be set.
    struct Probe: Decodable, Sendable {
        /// A gRPC health check (`grpc.health.v1.Health/Check`, protobuf).
        struct GRPCAction: Decodable, Sendable {
            /// The port asked.
            let port: Int
            /// The service name sent; absent means "".
            let service: String?
        }

        /// The gRPC handler.
        let grpc: GRPCAction?
        /// Handlers that must not be used here; their contents do not matter.
        let httpGet: IgnoredObject?
        /// See `httpGet`.
        let tcpSocket: IgnoredObject?
        /// See `httpGet`.
        let exec: IgnoredObject?
    }

    /// A JSON object whose contents are not read.
    struct IgnoredObject: Decodable, Sendable {}

    /// A volume of a pod.
    struct Volume: Decodable, Sendable {
        /// A PersistentVolumeClaim source.
        struct ClaimSource: Decodable, Sendable {
            /// The claim's name.
            let claimName: String
        }

        /// The volume's name.
        let name: String
        /// Set when the volume is a claim.
        let persistentVolumeClaim: ClaimSource?
        /// Set when the volume is an emptyDir.
        let emptyDir: IgnoredObject?
    }

    /// A `Service` (v1).
    struct Service: Decodable, Sendable {
        /// Its spec.
        struct Spec: Decodable, Sendable {
            /// `ClusterIP` when absent.
            let type: String?
            /// The pods it routes to.
            let selector: [String: String]?
            /// The ports.
            let ports: [Port]
        }

        /// One port of a Service.
        struct Port: Decodable, Sendable {
            /// The port clients use.
            let port: Int
            /// The pod's port: a number or the name of a container port.
            let targetPort: IntOrString?
            /// `TCP` when absent.
            let `protocol`: String?
        }

        /// The name and labels.
        let metadata: Metadata
        /// The spec.
        let spec: Spec
    }

    /// A field that holds either a number or a string.
    enum IntOrString: Decodable, Sendable, Equatable {
        /// A number.
        case int(Int)
        /// A name.
        case string(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                self = .int(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    /// A `PersistentVolumeClaim` (v1).
    struct PersistentVolumeClaim: Decodable, Sendable {
        /// Its spec.
        struct Spec: Decodable, Sendable {
            /// e.g. `ReadWriteOnce`.
            let accessModes: [String]?
        }

        /// The name and labels.
        let metadata: Metadata
        /// The spec.
        let spec: Spec
    }

    /// A `Secret` (v1): the manifests give `stringData`; `data` is base64.
    struct Secret: Decodable, Sendable {
        /// The name and labels.
        let metadata: Metadata
        /// Values in plain text.
        let stringData: [String: String]?
        /// Values in base64.
        let data: [String: String]?

        /// Every key, whichever form holds it.
        var keys: Set<String> { Set((stringData ?? [:]).keys).union((data ?? [:]).keys) }
    }

    /// A `ConfigMap` (v1).
    struct ConfigMap: Decodable, Sendable {
        /// The name and labels.
        let metadata: Metadata
        /// The settings.
        let data: [String: String]?
    }

    /// A `Kustomization` (kustomize.config.k8s.io/v1beta1).
    struct Kustomization: Decodable, Sendable {
        /// The files it applies.
        let resources: [String]?
    }
}
