import ArgumentParser
import Contracts
import ServiceTestSupport
import Testing

@testable import shopctl

/// The list commands share their paging flags (`PageOptions`): the same checks, and the page
/// size carried into the command a page prints for the next one.
@Suite("Paging flags of the list commands")
struct PageOptionsTests {
    /// The list commands.
    static let lists = [["products", "list"], ["favorites", "list"], ["order", "list"]]

    /// Parses `arguments` as shopctl would.
    private func parse(_ arguments: [String]) throws -> any ParsableCommand {
        try Shopctl.parseAsRoot(GlobalOptions.hoisted(arguments))
    }

    /// The paging flags and next-page command of a parsed list command.
    private func listPaging(of command: any ParsableCommand) -> (options: PageOptions, next: String)? {
        switch command {
        case let list as ProductsCommand.List: (list.paging, list.nextCommand)
        case let list as FavoritesCommand.List: (list.paging, list.nextCommand)
        case let list as OrderCommand.List: (list.paging, list.nextCommand)
        default: nil
        }
    }

    @Test("every list command refuses a page size outside 1 to 100", arguments: lists, ["0", "101"])
    func refusesPageSize(command: [String], size: String) {
        do {
            _ = try parse(command + ["--page-size", size])
            Issue.record("\(command) accepted --page-size \(size)")
        } catch {
            #expect(Shopctl.exitCode(for: error) == .validationFailure, "\(command) --page-size \(size): \(error)")
        }
    }

    @Test("every list command takes a page size of 1 to 100 and a page token", arguments: lists, [1, 100])
    func takesPageSize(command: [String], size: Int) throws {
        let parsed = try parse(command + ["--page-size", String(size), "--page-token", "tok"])
        let paging = try #require(listPaging(of: parsed), "\(command) is not a list command")
        #expect(paging.options.pageSize == size)
        #expect(paging.options.pageToken == "tok")
    }

    @Test(
        "the next page's command is the same list with the same filters and page size",
        arguments: [
            (["favorites", "list", "--page-size", "5"], "shopctl favorites list --page-size 5"),
            (["favorites", "list"], "shopctl favorites list"),
            (["order", "list", "--page-size", "7", "--page-token", "old"], "shopctl order list --page-size 7"),
            (["order", "list"], "shopctl order list"),
            (
                ["products", "list", "--page-size", "3", "--category", "bags", "--sort", "rating"],
                "shopctl products list --category bags --sort RATING --page-size 3"
            ),
            (
                ["products", "list", "--category", "men's clothing"],
                #"shopctl products list --category 'men'\''s clothing'"#
            ),
            (
                ["products", "list", "--search", "kid's $5 \"tee\"", "--page-size", "2"],
                #"shopctl products list --search 'kid'\''s $5 "tee"' --page-size 2"#
            ),
        ])
    func nextPageCommand(arguments: [String], expected: String) throws {
        let paging = try #require(listPaging(of: try parse(arguments)))
        #expect(paging.next == expected)
    }

    /// Values a POSIX shell would otherwise split, expand or choke on.
    static let awkwardValues = [
        "men's clothing", "'", "''", "it's \"$HOME\" `id` $(id) \\ ; & | * ? ~ # !", "tab\there", "new\nline", "",
        "café au lait", "bags",
    ]

    @Test("a POSIX shell reads the next page's command back as the same filters and token", arguments: awkwardValues)
    func nextPageCommandSurvivesTheShell(value: String) async throws {
        let list = try #require(
            try parse(["products", "list", "--category", value, "--search", value, "--page-size", "4"]) as? ProductsCommand.List)
        let token = "page '" + value
        let more = try #require(HumanText.nextPage(token, command: list.nextCommand))
        try #require(more.hasPrefix("More: "), "\(more)")
        let command = String(more.dropFirst("More: ".count))
        #expect(
            try await Self.shopctlArguments(command)
                == ["products", "list", "--category", value, "--search", value, "--page-size", "4", "--page-token", token],
            "\(command)")
    }

    /// The arguments `/bin/sh` passes to `shopctl` running `command` (`shopctl` becomes a
    /// function printing each argument it gets, NUL-terminated).
    static func shopctlArguments(_ command: String) async throws -> [String] {
        let result = try await Command.run(
            "/bin/sh", ["-c", #"shopctl() { printf '%s\0' "$@"; }; "# + command], timeout: .seconds(10))
        #expect(result.status == 0, "\(command): \(result)")
        return result.output.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test("the sign-in command printed after verifying an email quotes the address for the shell")
    func verifiedAccountCommand() async throws {
        #expect(AuthCommand.Verify.confirmation("ada@example.com").hasSuffix("`shopctl auth login --email ada@example.com`."))
        let message = AuthCommand.Verify.confirmation("o'brien+$shop@example.com")
        let command = try #require(message.split(separator: "`").dropFirst().first.map(String.init))
        #expect(try await Self.shopctlArguments(command) == ["auth", "login", "--email", "o'brien+$shop@example.com"], "\(command)")
    }

    @Test("a page of favorites or orders prints the next page's command with its token")
    func pagesPrintTheNextCommand() {
        let product = Product(
            id: 3, title: "Jacket", description: "", category: "men's clothing", price: Money(amount: 5599, currency: "USD"),
            image: "", rating: Rating(rate: 4.7, count: 500), stock: 12)
        let favorites = HumanText.favorites(
            ListFavoritesResponse(products: [product], nextPageToken: "tok"), command: "shopctl favorites list --page-size 1")
        #expect(favorites.hasSuffix("\nMore: shopctl favorites list --page-size 1 --page-token tok"))
        let order = Order(
            id: "o-1", status: .paid, items: [], total: Money(amount: 0, currency: "USD"),
            shippingAddress: Address(name: "Ada", line1: "1 Main St", city: "Springfield", postalCode: "12345", country: "US"),
            createdAt: "2026-11-22T01:41:17Z", updatedAt: "2026-11-22T01:41:17Z")
        let orders = HumanText.orders(
            ListOrdersResponse(orders: [order], nextPageToken: "next"), command: "shopctl order list --page-size 1")
        #expect(orders.hasSuffix("\nMore: shopctl order list --page-size 1 --page-token next"))
        #expect(!HumanText.orders(ListOrdersResponse(orders: [order], nextPageToken: ""), command: "x").contains("More:"))
    }
}
