@testable import auth_svc
import Testing

/// `AuthStore`'s users and provider identities, on a private in-memory database per test.
@Suite("AuthStore: users and identities")
struct AuthStoreUserTests {
    private let epoch = AuthStore.testEpoch

    @Test("a created user is found by id and by email, with a password provider")
    func createAndFind() async throws {
        try await AuthStore.withFresh { store in
            let created = try await store.createUser(
                email: "ada@example.com", passwordHash: "$scrypt$hash", displayName: "Ada", now: epoch)
            #expect(created.providers == ["password"])
            #expect(created.emailVerified == false)
            #expect(created.createdAt == epoch)

            let byID = try #require(try await store.user(id: created.id))
            let byEmail = try #require(try await store.user(email: "ada@example.com"))
            #expect(byID == created)
            #expect(byEmail == created)
            #expect(try await store.user(email: "nobody@example.com") == nil)
            #expect(try await store.user(id: "no-such-id") == nil)
            #expect(try await store.user(email: "") == nil)
        }
    }

    @Test("a second account with the same email is refused as emailInUse")
    func duplicateEmail() async throws {
        try await AuthStore.withFresh { store in
            _ = try await store.makePasswordUser("ada@example.com")
            await #expect(throws: AuthStore.Conflict.emailInUse) {
                _ = try await store.createUser(email: "ada@example.com", passwordHash: "other", displayName: nil)
            }
        }
    }

    @Test("a new identity creates a user; the same issuer and subject find that user again")
    func newIdentity() async throws {
        try await AuthStore.withFresh { store in
            let first = try await store.userForIdentity(
                provider: "google", issuer: "https://accounts.google.com", subject: "g-1", email: "grace@example.com",
                emailVerified: true, now: epoch).0
            #expect(first.providers == ["google"])
            #expect(first.passwordHash == nil)
            #expect(first.emailVerified)

            let again = try await store.userForIdentity(
                provider: "google", issuer: "https://accounts.google.com", subject: "g-1", email: "changed@example.com",
                emailVerified: false, now: epoch + 60).0
            #expect(again.id == first.id)
            #expect(try await store.user(issuer: "https://accounts.google.com", subject: "g-1")?.id == first.id)
            #expect(try await store.user(issuer: "https://appleid.apple.com", subject: "g-1") == nil)
        }
    }

    @Test("a verified provider email links to the verified password account, which keeps its password")
    func verifiedEmailLinks() async throws {
        try await AuthStore.withFresh { store in
            let account = try await store.makePasswordUser("ada@example.com", verified: true)
            let (session, _) = try await store.makeSession(for: account.id)

            let (linked, revoked) = try await store.userForIdentity(
                provider: "apple", issuer: "https://appleid.apple.com", subject: "a-1", email: "ada@example.com",
                emailVerified: true, now: epoch)
            #expect(linked.id == account.id)
            #expect(linked.emailVerified)
            #expect(linked.providers == ["password", "apple"])
            #expect(revoked.isEmpty)
            #expect(try await store.session(id: session.id)?.revokedAt == nil)
        }
    }

    @Test("linking proves the address of an account nobody had proved: its password, unproven identities and sessions go")
    func linkingWipesUnprovenAccess() async throws {
        try await AuthStore.withFresh { store in
            // Someone signed up with the address and a password of theirs, and someone's provider
            // account claimed it without vouching for it... (two accounts cannot share an address,
            // so the provider's claim is on the second account below.)
            let squatted = try await store.makePasswordUser("ada@example.com")
            let claimed = try await store.userForIdentity(
                provider: "google", issuer: "https://accounts.google.com", subject: "g-claims", email: "bob@example.com",
                emailVerified: false, now: epoch).0
            let (claimedSession, _) = try await store.makeSession(for: claimed.id)

            // ...then the owners sign in with providers that vouch for the addresses.
            let ada = try await store.userForIdentity(
                provider: "apple", issuer: "https://appleid.apple.com", subject: "a-ada", email: "ada@example.com",
                emailVerified: true, now: epoch + 1).0
            #expect(ada.id == squatted.id && ada.emailVerified)
            #expect(ada.passwordHash == nil && ada.providers == ["apple"], "the unproven password stays: \(ada)")

            let (bob, revoked) = try await store.userForIdentity(
                provider: "apple", issuer: "https://appleid.apple.com", subject: "a-bob", email: "bob@example.com",
                emailVerified: true, now: epoch + 2)
            #expect(bob.id == claimed.id && bob.providers == ["apple"])
            #expect(revoked == [claimedSession.id])
            #expect(try await store.user(issuer: "https://accounts.google.com", subject: "g-claims") == nil)
            #expect(try await store.session(id: claimedSession.id)?.revokedAt == epoch + 2)
        }
    }

    @Test("an unverified provider email of another account is refused and links nothing")
    func unverifiedEmailConflicts() async throws {
        try await AuthStore.withFresh { store in
            let account = try await store.makePasswordUser("ada@example.com")
            await #expect(throws: AuthStore.Conflict.emailInUse) {
                _ = try await store.userForIdentity(
                    provider: "google", issuer: "accounts.google.com", subject: "g-2", email: "ada@example.com",
                    emailVerified: false, now: epoch).0
            }
            #expect(try await store.user(issuer: "accounts.google.com", subject: "g-2") == nil)
            #expect(try await store.user(id: account.id)?.providers == ["password"])
            #expect(try await store.user(id: account.id)?.emailVerified == false)
        }
    }

    @Test("identities without an email make separate users, however many there are")
    func emptyEmails() async throws {
        try await AuthStore.withFresh { store in
            var ids: Set<String> = []
            for subject in ["s-1", "s-2", "s-3"] {
                let user = try await store.userForIdentity(
                    provider: "apple", issuer: "https://appleid.apple.com", subject: subject, email: "",
                    emailVerified: false, now: epoch).0
                #expect(user.email == "")
                ids.insert(user.id)
            }
            #expect(ids.count == 3)
        }
    }

    @Test("deleting a user revokes its sessions and forgets its identities")
    func deleteUser() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.userForIdentity(
                provider: "google", issuer: "accounts.google.com", subject: "g-9", email: "del@example.com",
                emailVerified: true, now: epoch).0
            let (first, _) = try await store.makeSession(for: user.id)
            let (second, _) = try await store.makeSession(for: user.id)

            let revoked = try await store.deleteUser(id: user.id, now: epoch + 10)
            #expect(Set(revoked) == [first.id, second.id])
            #expect(try await store.user(id: user.id) == nil)
            #expect(try await store.user(issuer: "accounts.google.com", subject: "g-9") == nil)
            #expect(try await store.session(id: first.id)?.revokedAt == epoch + 10)

            // The identity is gone, so signing in with it again makes a brand-new account.
            let reborn = try await store.userForIdentity(
                provider: "google", issuer: "accounts.google.com", subject: "g-9", email: "del@example.com",
                emailVerified: true, now: epoch + 20).0
            #expect(reborn.id != user.id)
        }
    }

    @Test("a display name is stored, replaced and cleared")
    func displayName() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            #expect(try await store.updateDisplayName(userID: user.id, to: "Ada L.").displayName == "Ada L.")
            #expect(try await store.updateDisplayName(userID: user.id, to: nil).displayName == nil)
            await #expect(throws: AuthStore.Conflict.noSuchUser) {
                _ = try await store.updateDisplayName(userID: "missing", to: "x")
            }
        }
    }
}
