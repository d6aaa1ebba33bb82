/// The cost parameters of scrypt (RFC 7914 §2) as a PHC string writes them: `ln` (log2 of the
/// CPU/memory cost N), `r` (block size) and `p` (parallelism).
///
/// Memory per hash is about 128 · N · r bytes: 128 MiB at the OWASP parameters. Bounds keep a
/// configured or stored value from asking for more than 1 GiB.
package struct ScryptParameters: Sendable, Hashable, CustomStringConvertible {
    /// OWASP's recommended minimum for scrypt: N = 2^17, r = 8, p = 1 (OWASP Password Storage
    /// Cheat Sheet, "scrypt").
    package static let owasp = ScryptParameters(unchecked: 17, 8, 1)

    /// The largest memory a parameter set may require, in bytes.
    static let maximumMemory = 1 << 30

    /// log2 of N, the CPU/memory cost.
    package let logRounds: Int
    /// r, the block size.
    package let blockSize: Int
    /// p, the parallelism.
    package let parallelism: Int

    /// The parameters, or nil unless 1 ≤ ln ≤ 24, 1 ≤ r ≤ 64, 1 ≤ p ≤ 16 and the memory cost
    /// stays within 1 GiB. Small values are allowed so tests can hash fast.
    package init?(logRounds: Int, blockSize: Int, parallelism: Int) {
        guard (1...24).contains(logRounds), (1...64).contains(blockSize), (1...16).contains(parallelism) else {
            return nil
        }
        // Within the bounds above this product is at most 2^24 · 2^13 = 2^37: no overflow.
        guard 128 * (1 << logRounds) * blockSize <= Self.maximumMemory else { return nil }
        self.init(unchecked: logRounds, blockSize, parallelism)
    }

    private init(unchecked logRounds: Int, _ blockSize: Int, _ parallelism: Int) {
        self.logRounds = logRounds
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// N, the CPU/memory cost.
    package var rounds: Int {
        1 << logRounds
    }

    /// The parameter segment of a PHC string: `ln=17,r=8,p=1`.
    package var description: String {
        "ln=\(logRounds),r=\(blockSize),p=\(parallelism)"
    }

    /// Whether any parameter is below its counterpart in `other`, so a hash made with these
    /// should be redone with `other`.
    func isWeaker(than other: ScryptParameters) -> Bool {
        logRounds < other.logRounds || blockSize < other.blockSize || parallelism < other.parallelism
    }

    /// The parameters a PHC parameter segment `ln=…,r=…,p=…` names, in exactly that order with
    /// plain decimal values; nil for anything else or values out of bounds.
    init?(phcSegment segment: Substring) {
        let fields = segment.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 3,
            let logRounds = Self.value(of: fields[0], named: "ln"),
            let blockSize = Self.value(of: fields[1], named: "r"),
            let parallelism = Self.value(of: fields[2], named: "p")
        else { return nil }
        self.init(logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
    }

    /// The decimal value of a `name=digits` field: 1–3 digits, no sign, no leading zero.
    private static func value(of field: Substring, named name: String) -> Int? {
        guard field.hasPrefix(name + "=") else { return nil }
        let digits = field.dropFirst(name.count + 1)
        guard (1...3).contains(digits.count), digits.first != "0",
            digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int(digits)
    }
}

/// One stored scrypt password hash and its PHC string form
/// (https://github.com/P-H-C/phc-string-format): `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>`.
///
/// Salt and hash use the standard base64 alphabet without padding; decoding is strict, so a
/// stored string has exactly one accepted form.
struct ScryptHash: Sendable, Hashable {
    /// The accepted salt lengths in bytes. Ours are 16; shorter ones from imported hashes
    /// still verify (and are then flagged for a rehash), as RFC 7914's 4-byte test salt shows.
    static let saltLengths = 4...64
    /// The accepted hash lengths in bytes.
    static let hashLengths = 16...64

    /// The cost parameters the hash was made with.
    let parameters: ScryptParameters
    /// The random salt.
    let salt: [UInt8]
    /// The derived key.
    let hash: [UInt8]

    /// A hash from its parts.
    init(parameters: ScryptParameters, salt: [UInt8], hash: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    /// The hash a PHC string describes, or nil unless it is exactly `$scrypt$ln=…,r=…,p=…$salt$hash`
    /// with parameters, salt and hash lengths in bounds.
    init?(phcString: String) {
        let fields = phcString.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt",
            let parameters = ScryptParameters(phcSegment: fields[2]),
            let salt = Base64Alphabet.standard.decode(fields[3]),
            let hash = Base64Alphabet.standard.decode(fields[4]),
            Self.saltLengths.contains(salt.count), Self.hashLengths.contains(hash.count)
        else { return nil }
        self.init(parameters: parameters, salt: salt, hash: hash)
    }

    /// The PHC string of this hash.
    var phcString: String {
        let salt = Base64Alphabet.standard.encode(salt)
        let hash = Base64Alphabet.standard.encode(hash)
        return "$scrypt$\(parameters)$\(salt)$\(hash)"
    }
}
