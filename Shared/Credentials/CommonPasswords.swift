/// The built-in list of common passwords `PasswordPolicy` refuses, all lower-case.
///
/// Composed from the patterns that dominate every published breach corpus: the word
/// "password" and its leetspeak, digit runs, keyboard walks on QWERTY, AZERTY and QWERTZ
/// layouts, repeated characters, popular words and names with the digits and years people
/// append, and seasons or months with years. Entries shorter than eight characters are kept
/// too: they cost nothing and keep the list meaningful if the minimum length ever drops.
enum CommonPasswords {
    /// Whether `lowercasedPassword` is in the list.
    static func contains(_ lowercasedPassword: String) -> Bool {
        all.contains(lowercasedPassword)
    }

    /// Every entry; built once, on first use.
    static let all: Set<String> = {
        var entries = Set(literal)
        for word in words {
            for suffix in suffixes {
                entries.insert(word + suffix)
            }
        }
        for year in 1970...2030 {
            entries.insert("\(year)\(year)")
            for word in ["password", "summer", "winter", "spring", "autumn", "welcome", "letmein", "qwerty"] {
                entries.insert("\(word)\(year)")
                entries.insert("\(word)@\(year)")
            }
        }
        for month in months {
            for year in 2000...2030 {
                entries.insert("\(month)\(year)")
            }
        }
        for symbol in "0123456789abcdefghijklmnopqrstuvwxyz!*." {
            for length in 6...12 {
                entries.insert(String(repeating: symbol, count: length))
            }
        }
        return entries
    }()

    /// Passwords listed as they are.
    private static let literal: [String] = [
        "123456", "1234567", "12345678", "123456789", "1234567890", "12345678910", "0123456789",
        "987654321", "9876543210", "87654321", "98765432", "11223344", "12341234", "123123123",
        "123321123", "123454321", "12344321", "147258369", "159357456", "147852369", "741852963",
        "963852741", "159753159", "11235813", "31415926", "3141592653", "13579246", "24682468",
        "qwerty", "qwertyui", "qwertyuiop", "qwertyuiop[]", "qwerty123", "qwerty1234", "qwertz",
        "qwertzui", "qwertzuiop", "azerty", "azertyui", "azertyuiop", "asdfghjk", "asdfghjkl",
        "asdfghjkl;", "zxcvbnm", "zxcvbnm,", "zxcvbnm123", "poiuytrewq", "lkjhgfdsa", "mnbvcxz",
        "1q2w3e4r", "1q2w3e4r5t", "1q2w3e4r5t6y", "q1w2e3r4", "q1w2e3r4t5", "1qaz2wsx", "1qaz2wsx3edc",
        "zaq12wsx", "zaq1zaq1", "zaq1xsw2", "qazwsxedc", "qazwsx123", "qweasdzxc", "qweasd123",
        "!qaz2wsx", "!qaz@wsx", "1qazxsw2", "qwer1234", "asdf1234", "zxcv1234", "abcd1234",
        "1234abcd", "1234qwer", "abc12345", "abcdefgh", "abcdefg1", "abcdefghij", "a1b2c3d4",
        "a1b2c3d4e5", "aa123456", "aaa11111", "qq123456", "asd12345", "password", "passw0rd",
        "p@ssword", "p@ssw0rd", "pa55word", "pa$$word", "pa$$w0rd", "passwort", "motdepasse",
        "contraseña", "contrasena", "parola", "wachtwoord", "haslo123", "senha123", "password!",
        "mypassword", "thepassword", "newpassword", "changeme", "changeme1", "changeme123",
        "letmein", "welcome", "iloveyou", "iloveyou!", "iloveu", "ilovegod", "trustno1",
        "secret123", "administrator", "admin123", "admin1234", "root1234", "toor1234",
        "default1", "guest123", "test1234", "testing123", "user1234", "login123", "access14",
        "nopassword", "starwars", "whatever", "loveme", "lovely", "princess1", "sunshine1",
        "football1", "baseball1", "superman1", "batman123", "pokemon1", "minecraft", "fortnite",
        "computer", "internet", "samsung", "blink182", "michael1", "jennifer1", "corvette",
        "mustang1", "ferrari1", "harley01", "jordan23", "kobe2424", "liverpool", "chelsea1",
        "arsenal1", "manchester", "barcelona", "realmadrid", "juventus", "cowboys1", "steelers",
        "yankees1", "lakers24", "matrix01", "mercedes", "qwerty!@#", "!@#$%^&*", "1q2w3e",
        "zaq!2wsx", "aaaaaa1", "abc123abc", "iloveyou1", "iloveyou2", "loveyou1", "ihateyou",
    ]

    /// Words people build passwords from, each also tried with every suffix below.
    private static let words: [String] = [
        "password", "qwerty", "letmein", "welcome", "iloveyou", "admin", "dragon", "monkey",
        "football", "baseball", "soccer", "hockey", "basketball", "sunshine", "princess",
        "master", "shadow", "superman", "batman", "spiderman", "michael", "jennifer", "jordan",
        "charlie", "daniel", "thomas", "jessica", "ashley", "michelle", "andrew", "joshua",
        "matthew", "robert", "william", "hunter", "ranger", "buster", "tigger", "pepper",
        "ginger", "maggie", "killer", "freedom", "flower", "cookie", "chocolate", "summer",
        "winter", "secret", "hello", "love", "money", "google", "apple", "samsung", "pokemon",
        "naruto", "starwars", "computer", "internet", "abc", "test", "login", "guest", "user",
        "root", "pass", "angel", "purple", "orange", "banana", "cheese", "family", "friends",
        "jesus", "blessed", "heaven", "forever", "liverpool", "arsenal", "chelsea", "soleil",
    ]

    /// What people append to a word to pass a length or "use a digit" rule.
    private static let suffixes: [String] = [
        "", "1", "12", "123", "1234", "12345", "123456", "!", "1!", "123!", "01", "007", "11",
        "13", "21", "22", "23", "69", "77", "88", "99", "2020", "2021", "2022", "2023", "2024",
        "2025", "2026",
    ]

    /// Month names, combined with years.
    private static let months: [String] = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september",
        "october", "november", "december",
    ]
}
