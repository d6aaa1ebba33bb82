import Foundation
import PostgreSQL
import ServiceTestSupport
import Testing

/// `LISTEN` and `NOTIFY` through ``PostgreSQLConnection/listen(_:)`` and
/// ``PostgreSQLConnection/waitForNotifications(timeout:)``, against a real server: what a
/// committed transaction notifies arrives, what a rolled-back one notifies never does, and a
/// listening connection the server drops says so.
@Suite("PostgreSQL notifications, live")
struct PostgreSQLNotificationLiveTests {
    @Test("a listening connection receives what other sessions notify on its channel once they commit, and nothing else")
    func committedNotificationsArrive() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let listener = try PostgreSQLConnection(url: url)
            try listener.listen("basket_changes")
            #expect(try listener.waitForNotifications(timeout: .milliseconds(50)).isEmpty)

            let sender = try PostgreSQLConnection(url: url)
            try sender.execute("SELECT pg_notify('basket_changes', $1)", ["user-1"])
            try sender.execute("NOTIFY other_channel, 'not for us'")
            #expect(try Self.notifications(on: listener, count: 1).map(\.payload) == ["user-1"])
            try sender.transaction { transaction in
                try transaction.execute("SELECT pg_notify('basket_changes', $1)", ["user-2"])
                // Not delivered before the commit.
                #expect(try listener.waitForNotifications(timeout: .milliseconds(200)).isEmpty)
                try transaction.execute("SELECT pg_notify('basket_changes', $1)", ["user-3"])
            }
            let arrived = try Self.notifications(on: listener, count: 2)
            #expect(arrived.map(\.payload) == ["user-2", "user-3"])
            #expect(arrived.allSatisfy { $0.channel == "basket_changes" && $0.processID == sender.backendProcessID })
            #expect(sender.backendProcessID != listener.backendProcessID)
        }
    }

    @Test("a notification of a transaction that rolls back is never delivered")
    func rolledBackNotificationsDoNot() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let listener = try PostgreSQLConnection(url: url)
            try listener.listen("basket_changes")
            let sender = try PostgreSQLConnection(url: url)
            struct Abandoned: Error {}
            #expect(throws: Abandoned.self) {
                try sender.transaction { transaction in
                    try transaction.execute("SELECT pg_notify('basket_changes', $1)", ["rolled back"])
                    throw Abandoned()
                }
            }
            try sender.execute("SELECT pg_notify('basket_changes', $1)", ["committed"])
            #expect(try Self.notifications(on: listener, count: 1).map(\.payload) == ["committed"])
            #expect(try listener.waitForNotifications(timeout: .milliseconds(200)).isEmpty)
        }
    }

    @Test("a listening connection the server terminates throws from waitForNotifications and is no longer open")
    func droppedConnectionThrows() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let listener = try PostgreSQLConnection(url: url)
            try listener.listen("basket_changes")
            let admin = try PostgreSQLConnection(url: url)
            try admin.execute("SELECT pg_terminate_backend($1)", [String(listener.backendProcessID)])
            let deadline = ContinuousClock.now + .seconds(10)
            var failure: PostgreSQLError?
            while failure == nil && ContinuousClock.now < deadline {
                do throws(PostgreSQLError) { _ = try listener.waitForNotifications(timeout: .milliseconds(100)) } catch { failure = error }
            }
            #expect(failure != nil)
            #expect(!listener.isOpen)
        }
    }

    /// Waits (up to five seconds) until `count` notifications have arrived on `listener`.
    static func notifications(on listener: PostgreSQLConnection, count: Int) throws -> [PostgreSQLNotification] {
        var arrived: [PostgreSQLNotification] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while arrived.count < count && ContinuousClock.now < deadline {
            arrived += try listener.waitForNotifications(timeout: .milliseconds(100))
        }
        return arrived
    }
}
