#if canImport(Security)
public import Foundation
import Security

/// A ``CredentialStore`` in the Keychain (Apple platforms): one generic-password item,
/// readable after the device's first unlock and never synced or moved to another device.
/// Compiled only where `Security` exists; its logic — what the client stores and when — is
/// the ``CredentialStore`` protocol's, tested with the file and memory stores.
///
/// Thread-safe: the Keychain serialises access to its items.
public struct KeychainCredentialStore: CredentialStore {
    /// The item's service, e.g. the app's bundle identifier.
    public let service: String
    /// The item's account name.
    public let account: String
    /// The access group shared with app extensions, if any.
    public let accessGroup: String?

    /// A store keeping the session in the item `service`/`account`.
    public init(service: String, account: String = "storefront-session", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    /// The stored session; nil when there is no item.
    public func load() throws -> StoredSession? {
        var query = baseQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        try Self.check(status)
        guard let data = result as? Data else { return nil }
        return try StoredSession.decoded(from: data)
    }

    /// Stores `session`, updating the item or adding it.
    public func save(_ session: StoredSession) throws {
        let data = try session.encoded()
        let update = [kSecValueData as String: data] as CFDictionary
        let status = SecItemUpdate(baseQuery as CFDictionary, update)
        guard status == errSecItemNotFound else { return try Self.check(status) }
        var item = baseQuery
        item[kSecValueData as String] = data
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        try Self.check(SecItemAdd(item as CFDictionary, nil))
    }

    /// Deletes the item; nothing happens when there is none.
    public func remove() throws {
        let status = SecItemDelete(baseQuery as CFDictionary)
        if status != errSecItemNotFound { try Self.check(status) }
    }

    /// What names the item.
    private var baseQuery: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    /// Throws the Keychain's error for a failed `status`.
    private static func check(_ status: OSStatus) throws {
        guard status != errSecSuccess else { return }
        throw NSError(domain: NSOSStatusErrorDomain, code: Int(status))
    }
}
#endif
