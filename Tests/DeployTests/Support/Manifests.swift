import Foundation
import ServiceTestSupport
import Testing

/// Every object of one directory of manifests — `deploy/k8s/*.yaml`, or the PostgreSQL
/// component's `deploy/k8s/postgres/*.yaml` — read with PyYAML (python3 turns each YAML
/// document into JSON; Swift decodes the JSON), with the typed views the tests check.
struct Manifests: Sendable {
    /// One YAML document: which file holds it, its kind, and its JSON form.
    struct Document: Sendable {
        /// The file's name, e.g. `auth-svc.yaml`.
        let file: String
        /// `apiVersion`, `kind` and `metadata.name`.
        let header: Kubernetes.Header
        /// The whole document as JSON.
        let json: Data

        /// The document decoded as `type`.
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONDecoder().decode(type, from: json)
        }

        /// `kind/name` for messages.
        var label: String { "\(header.kind ?? "?")/\(header.metadata?.name ?? "?") in \(file)" }
    }

    /// The directory of the manifests `kubectl apply -k deploy/k8s` applies.
    static let baseDirectory = Repository.url("deploy/k8s")
    /// The directory of the optional PostgreSQL server (a kustomize Component, not listed in
    /// ``baseDirectory``'s kustomization).
    static let postgresDirectory = Repository.url("deploy/k8s/postgres")

    /// The directory read.
    let directory: URL
    /// The names of the `.yaml` files in ``directory``.
    let files: [String]
    /// Every document of every file, in file order.
    let documents: [Document]

    /// Reads every manifest of `directory` (not of its subdirectories). Records an issue (and
    /// throws) when python3 or PyYAML is missing or a file is not valid YAML.
    static func load(
        _ directory: URL = Manifests.baseDirectory, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Manifests {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
        // One line per document: the file's name, a tab, the document as JSON (which escapes
        // every tab and newline inside it).
        let script = """
            import json, os, sys, yaml
            for path in sys.argv[1:]:
                with open(path) as f:
                    for document in yaml.safe_load_all(f):
                        if document is not None:
                            print(os.path.basename(path) + "\t" + json.dumps(document))
            """
        let result = try await Command.run(
            "python3", ["-c", script] + files.map { directory.appendingPathComponent($0).path }, timeout: .seconds(60))
        try #require(
            result.status == 0,
            "python3 with PyYAML could not read \(directory.path) (Tests/run installs it; or: python3 -m pip install pyyaml): \(result)",
            sourceLocation: sourceLocation)
        var documents: [Document] = []
        for line in result.output.split(separator: "\n") where !line.isEmpty {
            let parts = line.split(separator: "\t", maxSplits: 1)
            try #require(parts.count == 2, "unexpected line from the YAML reader: \(line)", sourceLocation: sourceLocation)
            let json = Data(parts[1].utf8)
            documents.append(
                Document(file: String(parts[0]), header: try JSONDecoder().decode(Kubernetes.Header.self, from: json), json: json))
        }
        return Manifests(directory: directory, files: files, documents: documents)
    }

    /// The documents of `kind`.
    func documents(ofKind kind: String) -> [Document] {
        documents.filter { $0.header.kind == kind }
    }

    /// Every object of `kind`, decoded as `type`.
    func objects<T: Decodable>(_ kind: String, as type: T.Type) throws -> [T] {
        try documents(ofKind: kind).map { try $0.decode(type) }
    }

    /// The Deployments.
    func deployments() throws -> [Kubernetes.Deployment] { try objects("Deployment", as: Kubernetes.Deployment.self) }
    /// The StatefulSets.
    func statefulSets() throws -> [Kubernetes.StatefulSet] { try objects("StatefulSet", as: Kubernetes.StatefulSet.self) }
    /// The PodDisruptionBudgets.
    func disruptionBudgets() throws -> [Kubernetes.PodDisruptionBudget] {
        try objects("PodDisruptionBudget", as: Kubernetes.PodDisruptionBudget.self)
    }
    /// The kustomization of the directory: a `Kustomization` or a `Component`.
    func kustomization() throws -> Kubernetes.Kustomization? {
        try (documents(ofKind: "Kustomization") + documents(ofKind: "Component")).first?.decode(Kubernetes.Kustomization.self)
    }
    /// The Services.
    func services() throws -> [Kubernetes.Service] { try objects("Service", as: Kubernetes.Service.self) }
    /// The PersistentVolumeClaims.
    func claims() throws -> [Kubernetes.PersistentVolumeClaim] {
        try objects("PersistentVolumeClaim", as: Kubernetes.PersistentVolumeClaim.self)
    }
    /// The Secrets.
    func secrets() throws -> [Kubernetes.Secret] { try objects("Secret", as: Kubernetes.Secret.self) }
    /// The ConfigMaps.
    func configMaps() throws -> [Kubernetes.ConfigMap] { try objects("ConfigMap", as: Kubernetes.ConfigMap.self) }
}
