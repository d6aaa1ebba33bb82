/// Client input quoted in an error message, bounded: a message travels back in `grpc-message`
/// (and into log lines), so it carries at most ``maxCharacters`` of what the client sent — an
/// id of 100 KB echoed whole would make every refusal of it 100 KB.
public enum ClientInput {
    /// The most characters (Unicode scalars) of client input a message quotes.
    public static let maxCharacters = 64

    /// `input` for a message: its first ``maxCharacters`` Unicode scalars, control characters
    /// as `?`, then `…` when some were left out. Scalars, not characters: one character may
    /// hold any number of combining scalars.
    public static func quoted(_ input: String) -> String {
        var scalars = String.UnicodeScalarView()
        var count = 0
        for scalar in input.unicodeScalars {
            guard count < maxCharacters else {
                scalars.append("…")
                break
            }
            scalars.append(scalar.properties.generalCategory == .control ? "?" : scalar)
            count += 1
        }
        return String(scalars)
    }
}
