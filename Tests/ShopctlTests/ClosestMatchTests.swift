import Contracts
import Testing

@testable import shopctl

/// "Did you mean …?": the closest known word to a mistyped one, or nothing when none is close.
@Suite("ClosestMatch: the nearest known word by edit distance")
struct ClosestMatchTests {
    private static let categories = ["electronics", "jewelery", "men's clothing", "women's clothing"]
    private static let commands = ["auth", "products", "categories", "favorites", "basket", "order", "admin"]

    @Test(
        "suggests the candidate a typo was meant to be",
        arguments: [
            ("jewelry", categories, "jewelery"),
            ("Jewelry", categories, "jewelery"),
            ("electronic", categories, "electronics"),
            ("mens clothing", categories, "men's clothing"),
            ("prodcts", commands, "products"),
            ("porducts", commands, "products"),
            ("basekt", commands, "basket"),
            ("ordr", commands, "order"),
            ("orders", commands, "order"),
            ("favourites", commands, "favorites"),
        ])
    func suggests(typed: String, candidates: [String], expected: String) {
        #expect(ClosestMatch.best(for: typed, among: candidates) == expected)
    }

    @Test(
        "suggests nothing when no candidate is close enough",
        arguments: [
            ("login", commands), ("xyz", commands), ("", commands), ("a", commands), ("products", []),
            ("shoes", categories), ("toys", categories), ("jewels and gold", categories),
        ])
    func nothingClose(typed: String, candidates: [String]) {
        #expect(ClosestMatch.best(for: typed, among: candidates) == nil)
    }

    @Test("an exact match ignoring case wins, in the candidate's spelling")
    func exactMatch() {
        #expect(ClosestMatch.best(for: "ORDER", among: ["orders", "Order"]) == "Order")
    }

    @Test("among equally close candidates, the first is chosen")
    func ties() {
        #expect(ClosestMatch.best(for: "cat", among: ["bat", "hat"]) == "bat")
        #expect(ClosestMatch.best(for: "cat", among: ["hat", "bat"]) == "hat")
    }

    @Test("the closest wins over an earlier, farther one")
    func closestWins() {
        #expect(ClosestMatch.best(for: "headphnes", among: ["headsets", "headphone", "headphones"]) == "headphones")
        #expect(ClosestMatch.best(for: "headphon", among: ["headphones", "headphone"]) == "headphone")
    }

    @Test("all: every candidate within the threshold, closest first, ties in the candidates' order, none for nothing typed")
    func allWithinThreshold() {
        #expect(ClosestMatch.all(for: "headphnes", among: ["headsets", "headphone", "speakers", "headphones"]) == ["headphones", "headphone"])
        #expect(ClosestMatch.all(for: "ORDER", among: ["orders", "Order", "border", "admin"]) == ["Order", "orders", "border"])
        #expect(ClosestMatch.all(for: "cat", among: ["hat", "dog", "bat"]) == ["hat", "bat"])
        #expect(ClosestMatch.all(for: "", among: ["a", ""]).isEmpty)
        #expect(ClosestMatch.all(for: "xyz", among: ClosestMatchTests.commands).isEmpty)
    }

    @Test("describe's close matches of a message name come closest first (APINames uses ClosestMatch.all)")
    func apiNamesClosestFirst() {
        #expect(APINames.message("Prodct", in: ["Products", "Product", "Order"]) == .unknown(closeMatches: ["Product", "Products"]))
        // Names containing what was typed follow the near misses.
        #expect(APINames.message("order", in: ["ListOrdersRequest", "Orders", "Product"]) == .unknown(closeMatches: ["Orders", "ListOrdersRequest"]))
    }

    @Test(
        "counts one edit per insertion, deletion, substitution or swap of neighbours",
        arguments: [
            ("headphones", "headphones", 0), ("headphnes", "headphones", 1), ("hedaphones", "headphones", 1),
            ("kitten", "sitting", 3), ("", "abc", 3), ("ca", "abc", 3), ("湯呑み", "湯のみ", 1),
        ])
    func distance(word: String, other: String, expected: Int) {
        #expect(EditDistance.distance(Array(word), Array(other), limit: 10) == expected)
        #expect(EditDistance.distance(Array(other), Array(word), limit: 10) == expected)
    }

    @Test("gives up beyond the limit")
    func limit() {
        #expect(EditDistance.distance(Array("kitten"), Array("sitting"), limit: 2) == nil)
        #expect(EditDistance.distance(Array("kitten"), Array("sitting"), limit: 3) == 3)
        #expect(EditDistance.distance(Array("a"), Array("abcdef"), limit: 4) == nil)
    }
}
