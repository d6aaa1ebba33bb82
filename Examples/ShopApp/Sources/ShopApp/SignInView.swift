import StorefrontKit
import SwiftUI

/// Sign-in with email and password, and sign-out. The tabs learn of either through
/// `stateChanges`; this view only reports what went wrong, by the error's reason.
struct SignInView: View {
    /// The app's client.
    let client: StorefrontClient
    /// The signed-in user; nil when signed out.
    let user: User?
    /// The email typed.
    @State private var email = ""
    /// The password typed.
    @State private var password = ""
    /// Whether a call is under way.
    @State private var working = false
    /// What went wrong last, for the shopper.
    @State private var problem: String?

    var body: some View {
        Form {
            if let user {
                Section("Signed in") {
                    Text(user.email)
                    Button("Sign out", role: .destructive) {
                        run { try await client.auth.signOut() }
                    }
                }
            } else {
                Section("Sign in") {
                    TextField("Email", text: $email).autocorrectionDisabled()
                    SecureField("Password", text: $password)
                    Button("Sign in") {
                        run { _ = try await client.auth.signIn(email: email, password: password) }
                    }
                    .disabled(working || email.isEmpty || password.isEmpty)
                }
            }
            if let problem { Text(problem).foregroundStyle(.red) }
        }
        .navigationTitle(user == nil ? "Sign in" : "Account")
    }

    /// Runs `call`, showing what went wrong.
    private func run(_ call: @escaping @MainActor () async throws -> Void) {
        working = true
        Task {
            do {
                try await call()
                password = ""
                problem = nil
            } catch {
                problem = Self.explain(error)
            }
            working = false
        }
    }

    /// What to tell the shopper about `error`, by its reason.
    static func explain(_ error: any Error) -> String {
        guard let error = error as? StorefrontError else { return "\(error)" }
        switch error.reason {
        case .invalidCredentials?: return "Wrong email or password."
        case .emailNotVerified?: return "Verify your email first: we have sent you a new link."
        case .tooManyAttempts?, .rateLimited?: return "Too many attempts. Try again in a while."
        default: return error.message
        }
    }
}
