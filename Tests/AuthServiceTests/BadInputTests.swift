import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Malformed and hostile requests (API.md §1 "Limits"): each is refused with the documented
/// code, names the bad field where there is one, and leaves the service serving.
@Suite("Bad input")
struct BadInputTests {
    /// A JSON request body with a wrong member, and the field the answer must name.
    struct WrongRequest: Sendable, CustomTestStringConvertible {
        var path: String
        var json: String
        var field: String
        var testDescription: String { "\(path.split(separator: "/").last ?? "") \(json)" }

        static let wrongTypes = [
            WrongRequest(path: AuthContract.signUp.path, json: #"{"email":5,"password":"blue-harbor-lantern-42"}"#, field: "email"),
            WrongRequest(path: AuthContract.signUp.path, json: #"{"email":"ada@example.com","password":true}"#, field: "password"),
            WrongRequest(
                path: AuthContract.signUp.path,
                json: #"{"email":"ada@example.com","password":"blue-harbor-lantern-42","displayName":["Ada"]}"#,
                field: "displayName"),
            WrongRequest(path: AuthContract.signIn.path, json: #"{"email":null,"password":"x"}"#, field: "email"),
            WrongRequest(path: AuthContract.signInWithIdToken.path, json: #"{"provider":"google","idToken":42}"#, field: "idToken"),
            WrongRequest(path: AuthContract.refreshSession.path, json: #"{"refreshToken":{}}"#, field: "refreshToken"),
            WrongRequest(path: AuthContract.verifyEmail.path, json: #"{"token":1.5}"#, field: "token"),
        ]
    }

    @Test("a member of the wrong JSON type is INVALID_ARGUMENT MALFORMED_MESSAGE naming it", arguments: WrongRequest.wrongTypes)
    func wrongType(request: WrongRequest) async throws {
        try await withAuthService { service in
            let error = await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                try await service.rawCall(request.path, json: Data(request.json.utf8))
            }
            #expect(error?.violatedFields == [request.field])
            #expect(await service.isServing())
        }
    }

    @Test("an empty SignUp request is INVALID_ARGUMENT with a field violation")
    func emptySignUp() async throws {
        try await withAuthService { service in
            let error = await expectRPCError(.invalidArgument, reason: nil) {
                try await service.rawCall(AuthContract.signUp.path, json: Data("{}".utf8))
            }
            let fields = error?.violatedFields ?? []
            #expect(fields.contains("email") || fields.contains("password"), "\(fields)")
            #expect(await service.isServing())
        }
    }

    @Test("a body that is not a JSON object is INVALID_ARGUMENT MALFORMED_MESSAGE", arguments: [
        #"{"email":"#, "[]", #""ada@example.com""#, "null", "\u{FF}\u{FE}",
    ])
    func notAnObject(body: String) async throws {
        try await withAuthService { service in
            await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                try await service.rawCall(AuthContract.signUp.path, json: Data(body.utf8))
            }
            #expect(await service.isServing())
        }
    }

    @Test("a 1 MiB email is INVALID_EMAIL naming the field, and the service keeps serving")
    func hugeEmail() async throws {
        try await withAuthService { service in
            let email = String(repeating: "a", count: 1 << 20) + "@example.com"
            let error = await expectRPCError(AuthReason.invalidEmail) { try await service.signUp(email) }
            #expect(error?.violatedFields == ["email"])
            // SignIn may refuse it as bad input or as unknown credentials, but never signs it in.
            await #expect(throws: RPCError.self) { try await service.signIn(email) }
            #expect(await service.isServing())
        }
    }

    @Test("a 1 MiB password is WEAK_PASSWORD and a 1 MiB display name INVALID_ARGUMENT")
    func hugePasswordAndName() async throws {
        try await withAuthService { service in
            let huge = String(repeating: "p", count: 1 << 20)
            await expectRPCError(AuthReason.weakPassword) { try await service.signUp("ada@example.com", password: huge) }
            let error = await expectRPCError(.invalidArgument, reason: nil) {
                try await service.signUp("ada@example.com", displayName: huge)
            }
            #expect(error?.violatedFields == ["displayName"])
            #expect(await service.isServing())
        }
    }

    @Test(
        "an address with non-ASCII characters is INVALID_EMAIL naming the field",
        arguments: ["zoë@exämple.de", "用户@例子.广告", "ada\u{202E}@example.com"])
    func unicodeEmail(email: String) async throws {
        try await withAuthService { service in
            let error = await expectRPCError(AuthReason.invalidEmail) {
                try await service.signUp(email, displayName: "Zoë 🚀")
            }
            #expect(error?.violatedFields == ["email"])
            #expect(await service.isServing())
        }
    }

    @Test("a display name with non-ASCII letters and emoji is accepted at sign-up")
    func unicodeName() async throws {
        try await withAuthService { service in
            let user = try await service.signUp("zoe@example.de", displayName: "Zoë Ødegård 🚀")
            #expect(user.displayName == "Zoë Ødegård 🚀")
        }
    }

    @Test("a display name with control characters is refused at sign-up too", arguments: ["Ada\u{0}", "Ada\u{1B}[2J"])
    func controlCharactersInName(name: String) async throws {
        try await withAuthService { service in
            let error = await expectRPCError(.invalidArgument, reason: nil) {
                try await service.signUp("ada@example.com", displayName: name)
            }
            #expect(error?.violatedFields == ["displayName"])
        }
    }

    @Test("an unknown method is UNIMPLEMENTED")
    func unknownMethod() async throws {
        try await withAuthService { service in
            await expectRPCError(.unimplemented, reason: nil) {
                try await service.rawCall("/shop.auth.v1.AuthService/MakeMeAdmin", json: Data("{}".utf8))
            }
            #expect(await service.isServing())
        }
    }
}
