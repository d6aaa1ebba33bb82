import Contracts

extension HumanText {
    /// The signed-in user.
    static func user(_ user: User) -> String {
        fields([
            ("Email", user.email + (user.emailVerified ? " (verified)" : " (not verified)")),
            ("Name", user.displayName ?? ""),
            ("User id", user.id),
            ("Sign-in", user.providers.joined(separator: ", ")),
            ("Created", user.createdAt),
        ])
    }

    /// One message of `auth watch`.
    static func authState(_ state: WatchAuthStateResponse) -> String {
        switch state.state {
        case .signedIn: "SIGNED_IN as \(state.user?.email ?? "?")"
        case .signedOut: "SIGNED_OUT: this session was ended; run `shopctl auth login` to sign in again"
        }
    }
}
