// grpc-swift 2 reference server for Benchmarks/run.
//
// Serves the unary method bench.v1.BenchService/Echo: request {"message": "..."}, response the
// same object. Messages are JSON (Foundation's JSONEncoder/JSONDecoder), plugged in through a
// hand-written MessageSerializer/MessageDeserializer pair, and the method is registered by hand
// on the RPCRouter (no protoc plugin).
//
// Note: grpc-swift's transport only accepts the content-types "application/grpc" and
// "application/grpc+proto" (anything else is answered with HTTP 415), so the benchmark sends
// "application/grpc" to this server; the body is still JSON.
//
// Usage: reference-grpc-swift [--host 127.0.0.1] [--port 50053]

import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix

struct EchoMessage: Codable, Sendable {
  var message: String
}

struct JSONMessageSerializer<Message: Encodable & Sendable>: MessageSerializer {
  func serialize<Bytes: GRPCContiguousBytes>(_ message: Message) throws -> Bytes {
    let encoder = JSONEncoder()
    let data = try encoder.encode(message)
    return Bytes(data)
  }
}

struct JSONMessageDeserializer<Message: Decodable & Sendable>: MessageDeserializer {
  func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
    let data = serializedMessageBytes.withUnsafeBytes { Data($0) }
    do {
      return try JSONDecoder().decode(Message.self, from: data)
    } catch {
      throw RPCError(code: .invalidArgument, message: "malformed JSON message: \(error)")
    }
  }
}

struct BenchService: RegistrableRPCService {
  static let echo = MethodDescriptor(
    fullyQualifiedService: "bench.v1.BenchService",
    method: "Echo"
  )

  func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
    router.registerHandler(
      forMethod: Self.echo,
      deserializer: JSONMessageDeserializer<EchoMessage>(),
      serializer: JSONMessageSerializer<EchoMessage>()
    ) { streamRequest, _ in
      let request = try await ServerRequest(stream: streamRequest)
      return StreamingServerResponse(single: ServerResponse(message: request.message))
    }
  }
}

func parseArguments() -> (host: String, port: Int) {
  var host = "127.0.0.1"
  var port = 50053
  var args = CommandLine.arguments.dropFirst()
  while let arg = args.popFirst() {
    switch arg {
    case "--host", "-host":
      guard let value = args.popFirst() else { usage("--host needs a value") }
      host = value
    case "--port", "-port":
      guard let value = args.popFirst(), let p = Int(value), (0...65535).contains(p) else {
        usage("--port needs a number 0...65535")
      }
      port = p
    case "-h", "--help":
      usage(nil)
    default:
      usage("unknown argument \(arg)")
    }
  }
  return (host, port)
}

func usage(_ problem: String?) -> Never {
  if let problem {
    FileHandle.standardError.write(Data("reference-grpc-swift: \(problem)\n".utf8))
  }
  FileHandle.standardError.write(Data("usage: reference-grpc-swift [--host H] [--port N]\n".utf8))
  exit(problem == nil ? 0 : 2)
}

@main
struct ReferenceServer {
  static func main() async throws {
    let (host, port) = parseArguments()
    let transport = HTTP2ServerTransport.Posix(
      address: GRPCNIOTransportCore.SocketAddress.ipv4(host: host, port: port),
      transportSecurity: HTTP2ServerTransport.Posix.TransportSecurity.plaintext,
      config: HTTP2ServerTransport.Posix.Config.defaults { config in
        config.http2.maxConcurrentStreams = 256
      }
    )
    let server = GRPCServer<HTTP2ServerTransport.Posix>(
      transport: transport,
      services: [BenchService()]
    )
    try await withThrowingDiscardingTaskGroup { group in
      group.addTask { try await server.serve() }
      let address = try await transport.listeningAddress
      FileHandle.standardOutput.write(Data("reference-grpc-swift listening on \(address)\n".utf8))
    }
  }
}
