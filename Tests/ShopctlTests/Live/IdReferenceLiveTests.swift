import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// The real `shopctl` against the real stack: basket lines named by product id, orders by a
/// short prefix, the card number piped in, and — with deploy/compose's record present — where
/// the verification email went.
@Suite("shopctl live: ids as people type them, and where compose's mail went", .serialized)
struct IdReferenceLiveTests {
    @Test("signup names compose's mail directory; basket set/remove take product ids; orders take 8-character prefixes")
    func idsAndMailDirectory() async throws {
        try await withShopctlStack { stack in
            let shopctl = try stack.shopctl()
            try await shopctl.waitUntilServing()
            let email = LiveFixtures.newEmail()
            let password = LiveFixtures.password + "\n"

            // With compose's record for this gateway, signing up says where the email is.
            let mailDir = stack.mailbox.directory.path
            try FileManager.default.createDirectory(
                at: shopctl.paths.composeRecord.deletingLastPathComponent(), withIntermediateDirectories: true)
            let record = #"{"gateway": "\#(shopctl.gateway)", "mailDir": "\#(mailDir)", "webURL": "http://\#(shopctl.gateway)/"}"#
            try Data(record.utf8).write(to: shopctl.paths.composeRecord)
            let signup = try await shopctl.succeed(["auth", "signup", "--email", email, "--password-stdin"], input: password)
            #expect(
                signup.output.contains(
                    "The verification email is in \(mailDir) (deploy/compose's mail directory): open the newest .eml"),
                "\(signup)")
            let scripted = try await shopctl.succeed(
                ["--json", "auth", "signup", "--email", LiveFixtures.newEmail(), "--password-stdin"], input: password)
            #expect(scripted.lines.count == 1 && !scripted.output.contains("mail directory"), "\(scripted)")
            let reset = try await shopctl.succeed(["auth", "reset-password", "--email", email])
            #expect(reset.output.contains("The reset email is in \(mailDir)"), "\(reset)")
            try FileManager.default.removeItem(at: shopctl.paths.composeRecord)
            let resent = try await shopctl.succeed(["auth", "resend-verification", "--email", email])
            #expect(!resent.output.contains("mail directory"), "\(resent)")

            let token = try await stack.mailbox.latestToken(to: email, kind: .verifyEmail, within: .seconds(15))
            try await shopctl.succeed(["auth", "verify", token])
            try await shopctl.succeed(["auth", "login", "--email", email, "--password-stdin"], input: password)

            // Basket lines by product id.
            let page = try ShopctlJSON.decode(
                ListProductsResponse.self, try await shopctl.succeed(["--json", "products", "list", "--page-size", "2"]).output)
            let (first, second) = (page.products[0].id, page.products[1].id)
            try await shopctl.succeed(["basket", "add", String(first)])
            try await shopctl.succeed(["basket", "add", String(second)])
            let set = try ShopctlJSON.decode(
                Basket.self, try await shopctl.succeed(["--json", "basket", "set", String(first), "3"]).output)
            #expect(set.items.first { $0.productId == first }?.count == 3, "\(set)")
            let removed = try ShopctlJSON.decode(
                Basket.self, try await shopctl.succeed(["--json", "basket", "remove", String(second)]).output)
            #expect(removed.items.map(\.productId) == [first])
            let absent = try await shopctl.run(["basket", "set", String(second), "2"])
            #expect(absent.status == 4)
            #expect(absent.errors.hasPrefix("error: ITEM_NOT_FOUND: Product \(second) is not in your basket."), "\(absent)")
            #expect(absent.errors.contains("`shopctl basket add \(second)`"))

            // The card number from standard input; the order by a prefix of its id.
            let placed = try await shopctl.succeed(
                ["--json", "order", "place", "--card-stdin", "--exp", "12/30", "--cvc", "123"] + LiveFixtures.addressFlags,
                input: "4242 4242 4242 4242\n")
            let order = try ShopctlJSON.decode(Order.self, placed.output)
            #expect(order.status == .paid)
            let prefix = String(order.id.prefix(8))
            let shown = try await shopctl.succeed(["order", "show", prefix])
            #expect(shown.output.hasPrefix("Order \(order.id): PAID"), "\(shown)")
            let short = try await shopctl.run(["order", "show", String(order.id.prefix(7))])
            #expect(short.status == 2)
            #expect(short.errors.contains("at least 8 characters"), "\(short)")
            let cancelled = try ShopctlJSON.decode(
                Order.self, try await shopctl.succeed(["--json", "order", "cancel", prefix.uppercased()]).output)
            #expect(cancelled.id == order.id && cancelled.status == .cancelled)
        }
    }
}
