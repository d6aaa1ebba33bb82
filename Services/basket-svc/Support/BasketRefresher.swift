import Logging
import Synchronization

/// Reads baskets again and publishes them to this process's watchers when
/// ``BasketChangeFeed`` reports them changed: how a change made on another replica reaches the
/// `WatchBasket` calls open here.
///
/// Only a basket someone watches here is read. Reads of one basket are coalesced: a change
/// reported while its basket is being read leads to one more read once that one ends (whose
/// snapshot may predate the change), however many changes were reported meanwhile. The hub
/// hands a watcher only a version newer than it was given, so a read that brings nothing new
/// (this replica's own change, already published by its handler) reaches no one.
///
/// Thread-safe (`Sendable`): the reads in progress live behind a `Mutex`.
final class BasketRefresher: Sendable {
    private let store: BasketStore
    private let hub: BasketHub
    private let logger: Logger
    /// The users whose basket is being read again, each with whether another read is due
    /// once that one ends.
    private let reads = Mutex<[String: Bool]>([:])

    /// Reads from `store` for the watchers of `hub`.
    init(store: BasketStore, hub: BasketHub, logger: Logger) {
        self.store = store
        self.hub = hub
        self.logger = logger
    }

    /// Acts on what the feed reports: reads the changed basket again, or every watched one
    /// when the feed (re)started listening and may have missed changes.
    func handle(_ event: BasketChangeFeed.Event) {
        switch event {
        case .changed(let userID): refresh(userID: userID)
        case .listening: hub.watchedUserIDs.forEach(refresh(userID:))
        }
    }

    /// Reads `userID`'s basket again (in a task of its own) and publishes it, when watched here.
    func refresh(userID: String) {
        guard hub.isWatched(userID: userID) else { return }
        let startsRead = reads.withLock { reads in
            guard reads[userID] == nil else {
                reads[userID] = true
                return false
            }
            reads[userID] = false
            return true
        }
        if startsRead { Task { await readAgain(userID: userID) } }
    }

    /// Reads and publishes `userID`'s basket, again for as long as changes were reported
    /// during the last read.
    private func readAgain(userID: String) async {
        repeat {
            do {
                hub.publish(try await store.basket(userID: userID).message, userID: userID)
            } catch let error where !hub.isClosed {
                logger.warning("could not read a changed basket for its watchers", metadata: ["error": "\(error)"])
            } catch {}  // shutting down: the watches end anyway
        } while reads.withLock { reads in
            guard reads[userID] == true else {
                reads[userID] = nil
                return false
            }
            reads[userID] = false
            return true
        }
    }
}
