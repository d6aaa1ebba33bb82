import RPC
import Testing

@Suite("Metadata")
struct MetadataTests {
    @Test("names are case-insensitive and stored in lower case")
    func caseInsensitive() {
        var metadata = Metadata()
        metadata.add("X-Request-ID", "abc")
        #expect(metadata["x-request-id"] == "abc")
        #expect(metadata["X-REQUEST-ID"] == "abc")
        #expect(metadata.values(of: "x-Request-Id") == ["abc"])
        #expect(metadata.map(\.name) == ["x-request-id"])
    }

    @Test("lower-case names are kept as they are; names with any upper-case letter, ASCII or not, are lowered")
    func lowering() {
        var metadata = Metadata()
        metadata.add("already-lower_1.2", "a")
        metadata.add("MiXeD", "b")
        metadata.add("ÜBER-key", "c")
        #expect(metadata.map(\.name) == ["already-lower_1.2", "mixed", "über-key"])
        #expect(metadata["über-KEY"] == "c")
        metadata.set("Mixed", "d")
        #expect(metadata.values(of: "mixed") == ["d"])
    }

    @Test("a dictionary literal lower-cases its names")
    func dictionaryLiteral() {
        let metadata: Metadata = ["Authorization": "Bearer t", "X-Api-Key": "k"]
        #expect(metadata.map(\.name) == ["authorization", "x-api-key"])
        #expect(metadata[MetadataKey.authorization] == "Bearer t")
        #expect(metadata[MetadataKey.apiKey] == "k")
    }

    @Test("add keeps earlier values, in order")
    func addKeepsValues() {
        var metadata = Metadata()
        metadata.add("tag", "one")
        metadata.add("other", "x")
        metadata.add("TAG", "two")
        #expect(metadata.values(of: "tag") == ["one", "two"])
        #expect(metadata["tag"] == "one")
        #expect(metadata.count == 3)
        #expect(metadata.map(\.value) == ["one", "x", "two"])
    }

    @Test("set replaces every value of a name with one")
    func setReplaces() {
        var metadata: Metadata = ["tag": "one", "keep": "k"]
        metadata.add("Tag", "two")
        metadata.set("TAG", "three")
        #expect(metadata.values(of: "tag") == ["three"])
        #expect(metadata["keep"] == "k")
        #expect(metadata.count == 2)
    }

    @Test("set to nil removes every value of a name")
    func setNilRemoves() {
        var metadata: Metadata = ["tag": "one", "keep": "k"]
        metadata.add("tag", "two")
        metadata.set("Tag", nil)
        #expect(metadata["tag"] == nil)
        #expect(metadata.values(of: "tag").isEmpty)
        #expect(metadata.count == 1)
    }

    @Test("set on a copy, with or without the name present, leaves the original as it was")
    func setOnCopy() {
        let original: Metadata = ["tag": "one", "keep": "k"]
        var added = original
        added.set("new", "n")
        var replaced = original
        replaced.set("tag", "two")
        var removed = original
        removed.set("keep", nil)
        #expect(original == ["tag": "one", "keep": "k"])
        #expect(added == ["tag": "one", "keep": "k", "new": "n"])
        #expect(replaced == ["keep": "k", "tag": "two"])
        #expect(removed == ["tag": "one"])
    }

    @Test("a missing name has no value")
    func missing() {
        let metadata = Metadata()
        #expect(metadata["anything"] == nil)
        #expect(metadata.values(of: "anything").isEmpty)
        #expect(metadata.count == 0)
    }

    @Test("equality compares names, values and order")
    func equality() {
        var first = Metadata()
        first.add("A", "1")
        first.add("b", "2")
        #expect(first == ["a": "1", "b": "2"])
        #expect(first != ["b": "2", "a": "1"])
        #expect(first != ["a": "1"])
    }

    @Test(
        "pseudo headers and protocol headers are not custom metadata",
        arguments: [
            ":path", ":method", ":authority", ":scheme", ":status", "content-type", "te", "grpc-timeout",
            "grpc-encoding", "grpc-accept-encoding", "user-agent", "grpc-status", "grpc-message", "content-length",
            "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
        ])
    func notCustom(name: String) {
        #expect(!Metadata.isCustom(name))
    }

    @Test(
        "application headers are custom metadata",
        arguments: [
            "authorization", "x-api-key", "x-request-id", "traceparent", "idempotency-key", "shop-trace-bin",
            "content-language", "tes", "hosts", "upgrade-insecure", "grpc", "x-grpc-thing",
            // the same lengths as protocol names, one byte off
            "tf", "hast", "upgrada", "user-agenu", "connectiom", "keep-alivf", "content-typf", "content-lengtg",
            "proxy-connectiom", "transfer-encodinh", "",
        ])
    func custom(name: String) {
        #expect(Metadata.isCustom(name))
    }

    @Test("the well-known keys are the documented names")
    func wellKnownKeys() {
        #expect(MetadataKey.authorization == "authorization")
        #expect(MetadataKey.apiKey == "x-api-key")
        #expect(MetadataKey.requestID == "x-request-id")
        #expect(MetadataKey.traceparent == "traceparent")
        #expect(MetadataKey.idempotencyKey == "idempotency-key")
    }
}
