import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// The recovery pass at start-up (order-svc README): an order a SIGKILL left between steps is
/// undone (before the charge counts) or completed (after it), never left half-done. The crash
/// cannot be timed over sockets, so each test kills order-svc, plants the state a crash at
/// that step leaves — the `orders` row, its running key, the catalog reservation, the ledger
/// entry — and restarts it on the same port and data directory.
@Suite("Crash recovery")
struct CrashRecoveryLiveTests {
    @Test("orders stuck at step reserved are undone on restart: stock released, any charge refunded, row and key gone")
    func reservedOrdersAreUndone() async throws {
        try await withLiveOrderStack { stack in
            let shopper = try await stack.newShopper()
            let first = try await stack.product(2)
            let second = try await stack.product(3)
            let uncharged = StuckOrder(of: first, count: 2, for: shopper, step: "reserved", isCharged: false)
            // Charged in the ledger, killed before the step was written as `charged`.
            let charged = StuckOrder(of: second, count: 1, for: shopper, step: "reserved", isCharged: true)

            try await plant([uncharged, charged], in: stack)
            #expect(try await stack.stock(of: first.id) == first.stock - 2)
            #expect(try await stack.stock(of: second.id) == second.stock - 1)
            try await stack.restart(.order)

            let database = OrderDatabase(stack)
            let settled = try await eventually(within: .seconds(10), every: .milliseconds(100)) {
                let rows = try await database.orderRowCount()
                let firstStock = try await stack.stock(of: first.id)
                let secondStock = try await stack.stock(of: second.id)
                return rows == 0 && firstStock == first.stock && secondStock == second.stock
            }
            #expect(settled, "recovery did not undo the orders:\n\(stack.logTail(of: .order))")
            #expect(try await database.chargeStatus(of: charged.id) == "refunded")
            #expect(try await database.chargeStatus(of: uncharged.id) == nil)
            #expect(try await stack.listOrders(as: shopper).orders.isEmpty)
            await expectRPCError(OrderReason.orderNotFound) { try await stack.order(uncharged.id, as: shopper) }

            // The interrupted call's key was freed, so the client's retry starts afresh.
            try await stack.addItem(first.id, for: shopper)
            let retried = try await stack.placeOrder(key: uncharged.key, as: shopper)
            #expect(retried.status == .paid)
            #expect(retried.id != uncharged.id)
        }
    }

    @Test("an order stuck at step charged is completed as PAID on restart, its sale standing")
    func chargedOrderIsCompleted() async throws {
        try await withLiveOrderStack { stack in
            let shopper = try await stack.newShopper()
            let product = try await stack.product(4)
            let stuck = StuckOrder(of: product, count: 3, for: shopper, step: "charged", isCharged: true)

            try await plant([stuck], in: stack)
            try await stack.restart(.order)

            let completed = await eventually(within: .seconds(10), every: .milliseconds(100)) {
                (try? await stack.order(stuck.id, as: shopper))?.status == .paid
            }
            #expect(completed, "recovery did not complete the order:\n\(stack.logTail(of: .order))")
            let order = try await stack.order(stuck.id, as: shopper)
            #expect(order.items == stuck.items)
            #expect(order.total.amount == stuck.total)
            #expect(order.payment == PaymentSummary(brand: "visa", last4: "4242"))
            #expect(try await stack.listOrders(as: shopper).orders.map(\.id) == [stuck.id])

            let database = OrderDatabase(stack)
            #expect(try await database.chargeStatus(of: stuck.id) == "charged")
            #expect(try await database.chargeCount() == 1)
            #expect(try await stack.stock(of: product.id) == product.stock - 3)
            let step = try await database.rows("SELECT step FROM orders WHERE id = \(OrderDatabase.quote(stuck.id))")
            #expect(step == [["done"]])
        }
    }

    /// Kills order-svc, reserves each order's stock at catalog-svc under its id, and writes the
    /// orders into the database; order-svc stays down.
    private func plant(_ orders: [StuckOrder], in stack: OrderStack) async throws {
        try await stack.service(.order).kill()
        for order in orders {
            try await stack.reserveStock(order.id, order.reservation)
        }
        let database = OrderDatabase(stack)
        let sequence = try await database.nextSequence()
        let statements = try orders.map { try $0.insertStatements(sequence: sequence) }.joined(separator: "\n")
        try await database.execute(statements)
        #expect(try await OrderDatabase(stack).orderRowCount() == orders.count)
    }
}
