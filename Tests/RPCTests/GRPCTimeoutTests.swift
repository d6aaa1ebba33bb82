import RPC
import Testing

@Suite("GRPCTimeout")
struct GRPCTimeoutTests {
    @Test(
        "parses every unit",
        arguments: [
            ("1n", Duration.nanoseconds(1)),
            ("250u", .microseconds(250)),
            ("100m", .milliseconds(100)),
            ("30S", .seconds(30)),
            ("2M", .seconds(120)),
            ("1H", .seconds(3_600)),
            ("99999999n", .nanoseconds(99_999_999)),
            ("00000005S", .seconds(5)),
        ])
    func parsesUnits(text: String, expected: Duration) {
        #expect(GRPCTimeout.parse(text) == expected)
    }

    @Test("a huge value saturates instead of overflowing")
    func parseSaturates() {
        #expect(GRPCTimeout.parse("99999999H") == .nanoseconds(Int64.max))
    }

    @Test(
        "rejects malformed values",
        arguments: [
            "",  // empty
            "S",  // no digits
            "10",  // no unit
            "10s",  // units are case-sensitive: `s` is not seconds
            "10h",
            "10x",
            "10ms",
            "123456789S",  // nine digits
            "-1S",
            "+1S",
            "1.5S",
            "1 S",
            " 1S",
            "1S ",
            "a1S",
            "1e3m",
            "0x1S",
            "١S",  // a non-ASCII digit
            "1µ",
        ])
    func rejects(text: String) {
        #expect(GRPCTimeout.parse(text) == nil)
    }

    /// Durations the encoder must handle; the clamp below covers those beyond `Int64.max` ns.
    static let durations: [Duration] = [
        .nanoseconds(1), .nanoseconds(999), .nanoseconds(9_999_999), .nanoseconds(10_000_001),
        .microseconds(1), .milliseconds(1), .milliseconds(999), .milliseconds(1_001), .seconds(1),
        .seconds(10), .seconds(59) + .nanoseconds(1), .seconds(3_600), .seconds(3_600) + .nanoseconds(1),
        .seconds(86_400 * 100), .seconds(86_400 * 100) + .nanoseconds(1), .seconds(Int64.max / 2),
        .seconds(Int64(9_223_372_036)),  // just under Int64.max nanoseconds
    ]

    @Test("encodes with at most seven digits and a known unit", arguments: durations)
    func encodeIsShort(duration: Duration) throws {
        let text = GRPCTimeout.encode(duration)
        let unit = try #require(text.last)
        let digits = text.dropLast()
        #expect("numSMH".contains(unit), "\(text)")
        #expect(!digits.isEmpty && digits.count <= 7, "\(text)")
        #expect(digits.allSatisfy { $0.isASCII && $0.isNumber }, "\(text)")
    }

    @Test("encoding rounds up, so the peer never gives up first", arguments: durations)
    func encodeRoundsUp(duration: Duration) throws {
        let parsed = try #require(GRPCTimeout.parse(GRPCTimeout.encode(duration)))
        // `parse` saturates at Int64.max nanoseconds (about 292 years): that is the most a
        // round trip can give back.
        #expect(parsed >= min(duration, .nanoseconds(Int64.max)), "\(GRPCTimeout.encode(duration))")
    }

    @Test(
        "encoding picks the finest unit that fits",
        arguments: [
            (Duration.nanoseconds(1), "1n"),
            (.nanoseconds(10), "10n"),
            (.nanoseconds(1_000_000), "1000000n"),
            (.nanoseconds(1_234_567), "1234567n"),
            (.nanoseconds(9_999_999), "9999999n"),
            (.nanoseconds(10_000_000), "10000u"),
            (.nanoseconds(10_000_001), "10001u"),  // rounded up, not down
            (.milliseconds(999), "999000u"),
            (.seconds(10), "10000m"),
            (.seconds(3_600), "3600000m"),
            (.seconds(86_400 * 100), "8640000S"),
            (.seconds(86_400 * 200), "288000M"),
        ])
    func encodeExact(duration: Duration, expected: String) {
        #expect(GRPCTimeout.encode(duration) == expected)
    }

    @Test(
        "a non-positive duration encodes as 1n",
        arguments: [Duration.zero, .nanoseconds(-1), .seconds(-5), .milliseconds(-0.5), .seconds(Int64.min / 2)])
    func nonPositive(duration: Duration) {
        #expect(GRPCTimeout.encode(duration) == "1n")
    }

    @Test(
        "a sub-nanosecond remainder rounds up rather than being dropped",
        arguments: [
            Duration(secondsComponent: 0, attosecondsComponent: 1),
            Duration(secondsComponent: 0, attosecondsComponent: 500_000_000),
            Duration(secondsComponent: 1, attosecondsComponent: 1),
        ])
    func subNanosecondRoundsUp(duration: Duration) throws {
        let text = GRPCTimeout.encode(duration)
        let parsed = try #require(GRPCTimeout.parse(text), "\(text)")
        #expect(parsed > .zero, "\(text)")
        #expect(parsed >= duration, "\(text)")
    }

    @Test("a duration whose nanoseconds overflow Int64 only in the fraction does not encode as negative")
    func fractionOverflow() throws {
        // 9_223_372_036 s fits in Int64 nanoseconds; adding 0.9 s does not.
        let duration = Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 900_000_000_000_000_000)
        let text = GRPCTimeout.encode(duration)
        #expect(!text.hasPrefix("-"), "\(text)")
        let parsed = try #require(GRPCTimeout.parse(text), "\(text)")
        #expect(parsed >= .seconds(9_223_372_036), "\(text)")
    }
}
