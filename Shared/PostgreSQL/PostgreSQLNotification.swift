/// One `NOTIFY` (or `pg_notify`) a listening connection received: delivered once the
/// notifying transaction committed, never for one that rolled back.
public struct PostgreSQLNotification: Sendable, Hashable {
    /// The channel it was sent on.
    public var channel: String
    /// What the sender attached; empty when it sent none.
    public var payload: String
    /// The server process of the notifying session (``PostgreSQLConnection/backendProcessID``).
    public var processID: Int32

    /// A notification on `channel` carrying `payload`, from the session of `processID`.
    public init(channel: String, payload: String, processID: Int32) {
        self.channel = channel
        self.payload = payload
        self.processID = processID
    }
}
