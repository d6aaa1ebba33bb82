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

        /// Whether the selector names at least one label and `labels` carry every one.
        func selects(_ labels: [String: String]) -> Bool {
            Kubernetes.selects(matchLabels, labels)
        }
    }

    /// Whether `selector` (a Service's `selector` or a `matchLabels`) names at least one label
    /// and `labels` carry every one; an empty selector counts as selecting nothing here, since
    /// none of the manifests means "every pod".
    static func selects(_ selector: [String: String]?, _ labels: [String: String]) -> Bool {
        guard let selector, !selector.isEmpty else { return false }
        return selector.allSatisfy { labels[$0.key] == $0.value }
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
            /// How far a rolling update may go below and above `replicas`.
            struct RollingUpdate: Decodable, Sendable {
                /// Pods that may be unavailable during the update (a number or a percentage).
                let maxUnavailable: IntOrString?
                /// Pods that may be created above `replicas`.
                let maxSurge: IntOrString?
            }

            /// `Recreate` or `RollingUpdate`.
            let type: String?
            /// Set with `RollingUpdate`.
            let rollingUpdate: RollingUpdate?
        }

        /// The name and labels.
        let metadata: Metadata
        /// The spec.
        let spec: Spec

        /// The pod's containers.
        var containers: [Container] { spec.template.spec.containers }
        /// The labels of its pods.
        var podLabels: [String: String] { spec.template.metadata?.labels ?? [:] }
    }

    /// A `StatefulSet` (apps/v1).
    struct StatefulSet: Decodable, Sendable {
        /// Its spec.
        struct Spec: Decodable, Sendable {
            /// How many pods.
            let replicas: Int?
            /// The Service that governs the pods' network identity.
            let serviceName: String?
            /// Which pods it owns.
            let selector: LabelSelector?
            /// The pod template.
            let template: PodTemplate
            /// The claims made for each pod, mounted as volumes of their names.
            let volumeClaimTemplates: [PersistentVolumeClaim]?
        }

        /// The name and labels.
        let metadata: Metadata
        /// The spec.
        let spec: Spec

        /// The pod's containers.
        var containers: [Container] { spec.template.spec.containers }
        /// The labels of its pods.
        var podLabels: [String: String] { spec.template.metadata?.labels ?? [:] }
    }

    /// A `PodDisruptionBudget` (policy/v1): how many pods voluntary disruptions (drains,
    /// evictions) may take at once.
    struct PodDisruptionBudget: Decodable, Sendable {
        /// Its spec: one of `minAvailable` and `maxUnavailable`.
        struct Spec: Decodable, Sendable {
            /// Pods that must stay available.
            let minAvailable: IntOrString?
            /// Pods that may be unavailable.
            let maxUnavailable: IntOrString?
            /// The pods it counts.
            let selector: LabelSelector?
        }

        /// The name and labels.
        let metadata: Metadata
        /// The spec.
        let spec: Spec

        /// How many of `replicas` ready pods it lets go at once; nil when it is given as a
        /// percentage or not at all (the manifests give numbers).
        func allowedDisruptions(of replicas: Int) -> Int? {
            switch (spec.minAvailable, spec.maxUnavailable) {
            case (.int(let minimum)?, nil): max(0, replicas - minimum)
            case (nil, .int(let maximum)?): min(maximum, replicas)
            default: nil
            }
        }
    }

    /// One rule spreading a workload's pods over a topology (nodes, zones).
    struct TopologySpreadConstraint: Decodable, Sendable {
        /// The node label whose values are the domains, e.g. `kubernetes.io/hostname`.
        let topologyKey: String
        /// The pods counted.
        let labelSelector: LabelSelector?
        /// The most the pod counts of two domains may differ by.
        let maxSkew: Int?
    }

    /// A pod template.
    struct PodTemplate: Decodable, Sendable {
        /// The pod's labels and annotations (and nothing else of its metadata).
        struct TemplateMetadata: Decodable, Sendable {
            /// The pod's labels.
            let labels: [String: String]?
            /// The pod's annotations (`prometheus.io/scrape` …).
            let annotations: [String: String]?
        }

        /// The pod's labels and annotations.
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
        /// How the pods spread over nodes or zones.
        let topologySpreadConstraints: [TopologySpreadConstraint]?
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
            /// Whether the container may only read it.
            let readOnly: Bool?
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

        /// A Secret source: each key a file of the volume.
        struct SecretSource: Decodable, Sendable {
            /// The Secret's name.
            let secretName: String
            /// Whether the pod starts without the Secret.
            let optional: Bool?
        }

        /// The volume's name.
        let name: String
        /// Set when the volume is a claim.
        let persistentVolumeClaim: ClaimSource?
        /// Set when the volume is a Secret's keys.
        let secret: SecretSource?
        /// Set when the volume is an emptyDir.
        let emptyDir: IgnoredObject?
    }

    /// A `Service` (v1).
    struct Service: Decodable, Sendable {
        /// Its spec.
        struct Spec: Decodable, Sendable {
            /// `ClusterIP` when absent.
            let type: String?
            /// `None` for a headless Service, whose DNS name resolves to every ready pod.
            let clusterIP: String?
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

        /// Whether it is headless (`clusterIP: None`).
        var isHeadless: Bool { spec.clusterIP == "None" }
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

    /// A `Kustomization` (kustomize.config.k8s.io/v1beta1), or a `Component`
    /// (kustomize.config.k8s.io/v1alpha1), which has the same `resources`.
    struct Kustomization: Decodable, Sendable {
        /// The files it applies.
        let resources: [String]?
    }
}
