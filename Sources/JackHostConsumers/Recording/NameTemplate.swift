import Glibc
import JackHostSupport

/// A take name that holds time fields (`/var/log/audio/log-%Y%m%d-%H%M%S.wav`, or in date
/// folders `/srv/log/%Y/%m/%d/%H%M.wav`), expanded from a time in a ``TakeTimeZone`` and parsed
/// back by ``SegmentRetention``.
///
/// Only a whitelist of fixed-width fields is accepted, so every name parses back to the time
/// that made it: `%Y` (4 digits), `%m`, `%d`, `%H`, `%M`, `%S`, `%y` (2 digits), `%j`
/// (3 digits) and `%%` (a literal `%`). Fields expand to digits only, so no field can make a
/// `/`, a `.` or a `..`: a name never leaves the template's tree.
///
/// The path splits in three:
/// - the *root*, the directories before the first one with a field (`/srv/log`), which must
///   exist and are never made or removed;
/// - the *levels*, every directory from the first one with a field on (`%Y`, `%m`, `%d`; a
///   literal level after them, such as `%Y/audio`, is one too), which ``TakeFiles`` makes as
///   segments need them and ``SegmentRetention`` may remove once they are empty, if jackhost
///   made them (see ``TakeMark``); a level may not be empty, `.` or `..`;
/// - the file name, whose extension may hold no field.
struct NameTemplate: Sendable {
    /// One piece of a file or directory name.
    enum Token: Sendable, Equatable {
        /// Text copied as is (UTF-8).
        case literal([UInt8])
        /// A time field, by its letter (`Y`, `m`, …).
        case field(UInt8)
    }

    /// The digits each field of a name stood for, gathered across its levels and file name.
    struct FieldValues: Sendable {
        /// Each field's value, by letter.
        var values: [UInt8: Int] = [:]
        /// Each field's digits as they appeared, by letter.
        var digits: [UInt8: ArraySlice<UInt8>] = [:]
    }

    /// The accepted fields and their widths in digits.
    static let fieldWidths: [UInt8: Int] = [
        UInt8(ascii: "Y"): 4, UInt8(ascii: "m"): 2, UInt8(ascii: "d"): 2, UInt8(ascii: "H"): 2,
        UInt8(ascii: "M"): 2, UInt8(ascii: "S"): 2, UInt8(ascii: "j"): 3, UInt8(ascii: "y"): 2,
    ]
    /// The accepted fields in words, for messages.
    static let acceptedFields = "%Y %m %d %H %M %S %j %y or %%"

    /// The root: the directories before the first one with a field, literally ("" for the
    /// current one).
    let directory: String
    /// The directory levels from the first one with a field on, each a name to expand; empty
    /// when no directory holds a field.
    let directoryLevels: [[Token]]
    /// The file name without its extension.
    let tokens: [Token]
    /// The extension without its dot ("" for none).
    let fileExtension: String
    /// The zone names are expanded in and read back in.
    let timeZone: TakeTimeZone

    /// Parses `template`, refusing a field outside the whitelist, a field in the extension, a
    /// directory level that is empty, `.` or `..`, and a path with no file name.
    init(parsing template: String, timeZone: TakeTimeZone = .local) throws(RecorderError) {
        let directoryPath = template.deletingLastPathComponent
        let fileName = String(template.dropFirst(directoryPath.isEmpty ? 0 : directoryPath.count + (directoryPath == "/" ? 0 : 1)))
        guard !fileName.isEmpty else { throw .invalidTemplate(template: template, reason: "it has no file name") }
        let (stem, fileExtension) = fileName.splittingPathExtension
        guard !fileExtension.contains("%") else {
            throw .invalidTemplate(template: template, reason: "put the fields before the extension (log-%Y%m%d.wav)")
        }
        (directory, directoryLevels) = try Self.directoryParts(directoryPath, template: template)
        tokens = try Self.tokens(of: Array(stem.utf8)[...], template: template)
        self.fileExtension = fileExtension
        self.timeZone = timeZone
    }

    /// Splits a template's directory into its literal root and its levels (see ``NameTemplate``).
    private static func directoryParts(_ path: String, template: String) throws(RecorderError) -> (root: String, levels: [[Token]]) {
        let absolute = path.hasPrefix("/")
        let components = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(absolute ? 1 : 0)
        var root: [String] = []
        var levels: [[Token]] = []
        for component in components {
            let parsed = try tokens(of: Array(component.utf8)[...], template: template)
            let hasField = parsed.contains { if case .field = $0 { true } else { false } }
            if levels.isEmpty && !hasField {
                // `%%` is a percent sign in the root as anywhere else.
                root.append(parsed.map { if case .literal(let bytes) = $0 { String(decoding: bytes, as: UTF8.self) } else { "" } }.joined())
                continue
            }
            if !hasField && [[], [.literal(Array(".".utf8))], [.literal(Array("..".utf8))]].contains(parsed) {
                let shown = component.isEmpty ? "an empty directory name (//)" : "a directory named \(component)"
                throw .invalidTemplate(template: template, reason: "\(shown) after a field would leave the log's tree; name every level")
            }
            levels.append(parsed)
        }
        let joined = root.joined(separator: "/")
        return (absolute ? (joined.isEmpty ? "/" : "/" + joined) : joined, levels)
    }

    /// The tokens of one name (a directory level or the file name's stem).
    private static func tokens(of name: ArraySlice<UInt8>, template: String) throws(RecorderError) -> [Token] {
        var tokens: [Token] = []
        var literal: [UInt8] = []
        var bytes = name
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                literal.append(byte)
                continue
            }
            guard let letter = bytes.popFirst() else {
                throw .invalidTemplate(template: template, reason: "a name ends with a lone %; write %% for a percent sign")
            }
            if letter == UInt8(ascii: "%") {
                literal.append(letter)
            } else if fieldWidths[letter] != nil {
                if !literal.isEmpty { tokens.append(.literal(literal)) }
                literal = []
                tokens.append(.field(letter))
            } else {
                let shown = String(decoding: [UInt8(ascii: "%"), letter], as: UTF8.self)
                throw .invalidTemplate(template: template, reason: "\(shown) is not a supported field; use \(acceptedFields)")
            }
        }
        if !literal.isEmpty { tokens.append(.literal(literal)) }
        return tokens
    }

    /// Whether the name (its levels and file name together) holds a full date (a year, and a
    /// month and day or a day of the year), so that the age of a file can be told from its path.
    var hasDate: Bool {
        let letters = Set(
            (directoryLevels.flatMap { $0 } + tokens).compactMap { token -> UInt8? in
                if case .field(let letter) = token { letter } else { nil }
            })
        let year = letters.contains(UInt8(ascii: "Y")) || letters.contains(UInt8(ascii: "y"))
        let day = (letters.contains(UInt8(ascii: "m")) && letters.contains(UInt8(ascii: "d"))) || letters.contains(UInt8(ascii: "j"))
        return year && day
    }

    /// `tokens` expanded for the calendar fields `parts`.
    private static func expand(_ tokens: [Token], _ parts: tm) -> String {
        var text = ""
        for token in tokens {
            switch token {
            case .literal(let bytes): text += String(decoding: bytes, as: UTF8.self)
            case .field(let letter): text += value(of: letter, in: parts)
            }
        }
        return text
    }

    /// The file name's stem for the time `time`, in ``timeZone``.
    func stem(at time: time_t) -> String {
        Self.expand(tokens, timeZone.parts(of: time))
    }

    /// The directory the file for the time `time` goes in, in ``timeZone``: the root and the
    /// levels expanded.
    func directory(at time: time_t) -> String {
        levelDirectories(at: time).last ?? directory
    }

    /// The date folders of the file for the time `time`, in ``timeZone``, from the first level
    /// down (`/srv/log/2026`, `/srv/log/2026/03`, …); empty when no directory holds a field.
    func levelDirectories(at time: time_t) -> [String] {
        let parts = timeZone.parts(of: time)
        var path = directory
        return directoryLevels.map { level in
            path = TakeFiles.joined(path, Self.expand(level, parts))
            return path
        }
    }

    /// The full path for the time `time`, in ``timeZone``.
    func path(at time: time_t) -> String {
        let name = fileExtension.isEmpty ? stem(at: time) : "\(stem(at: time)).\(fileExtension)"
        return TakeFiles.joined(directory(at: time), name)
    }

    /// The digits `letter` stands for in `parts`.
    static func value(of letter: UInt8, in parts: tm) -> String {
        let year = Int(parts.tm_year) + 1900
        switch letter {
        case UInt8(ascii: "Y"): return year.zeroPadded(to: 4)
        case UInt8(ascii: "y"): return (((year % 100) + 100) % 100).zeroPadded(to: 2)
        case UInt8(ascii: "m"): return Int(parts.tm_mon + 1).zeroPadded(to: 2)
        case UInt8(ascii: "d"): return Int(parts.tm_mday).zeroPadded(to: 2)
        case UInt8(ascii: "H"): return Int(parts.tm_hour).zeroPadded(to: 2)
        case UInt8(ascii: "M"): return Int(parts.tm_min).zeroPadded(to: 2)
        case UInt8(ascii: "S"): return Int(parts.tm_sec).zeroPadded(to: 2)
        case UInt8(ascii: "j"): return Int(parts.tm_yday + 1).zeroPadded(to: 3)
        default: return ""
        }
    }

    /// Matches the start of `name` against `tokens`, adding the fields' values to `found`, and
    /// returns how many bytes it took; nil when it does not match, or gives a field another
    /// value than an earlier level or field did.
    static func match(_ tokens: [Token], atStartOf name: ArraySlice<UInt8>, into found: inout FieldValues) -> Int? {
        var rest = name
        for token in tokens {
            switch token {
            case .literal(let bytes):
                guard rest.starts(with: bytes) else { return nil }
                rest = rest.dropFirst(bytes.count)
            case .field(let letter):
                let width = fieldWidths[letter] ?? 0
                let text = rest.prefix(width)
                guard text.count == width, text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
                let value = text.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                if let earlier = found.values[letter], earlier != value { return nil }
                found.values[letter] = value
                found.digits[letter] = text
                rest = rest.dropFirst(width)
            }
        }
        return name.count - rest.count
    }

    /// Matches the start of `name` against the file name's stem and returns the time it names
    /// and how many bytes it took; nil when it does not match or names no valid time.
    /// `levels` holds what the directories above it gave.
    func time(atStartOf name: ArraySlice<UInt8>, levels: FieldValues = FieldValues()) -> (time: time_t, length: Int)? {
        var found = levels
        guard hasDate, let length = Self.match(tokens, atStartOf: name, into: &found), let named = self.time(of: found) else { return nil }
        return (named, length)
    }

    /// The time `found` names in ``timeZone``; nil when it names no valid time.
    ///
    /// Fields the template lacks are taken at their latest (23:59:59 for a name with a date
    /// only), so a file is never judged older than it is. The time must expand back to the
    /// same digits, which refuses impossible dates (`20260230`).
    func time(of found: FieldValues) -> time_t? {
        guard hasDate else { return nil }
        let values = found.values
        var parts = tm()
        if let year = values[UInt8(ascii: "Y")] {
            parts.tm_year = Int32(year - 1900)
        } else if let short = values[UInt8(ascii: "y")] {
            parts.tm_year = Int32(short < 69 ? short + 100 : short)  // POSIX strptime: 69-99 are 1969-1999
        }
        if let month = values[UInt8(ascii: "m")], let day = values[UInt8(ascii: "d")] {
            guard (1...12).contains(month), (1...31).contains(day) else { return nil }
            parts.tm_mon = Int32(month - 1)
            parts.tm_mday = Int32(day)
        } else if let dayOfYear = values[UInt8(ascii: "j")] {
            guard (1...366).contains(dayOfYear) else { return nil }
            parts.tm_mon = 0
            parts.tm_mday = Int32(dayOfYear)
        }
        parts.tm_hour = Int32(values[UInt8(ascii: "H")] ?? 23)
        parts.tm_min = Int32(values[UInt8(ascii: "M")] ?? 59)
        parts.tm_sec = Int32(values[UInt8(ascii: "S")] ?? 59)
        guard parts.tm_hour <= 23, parts.tm_min <= 59, parts.tm_sec <= 60, let named = timeZone.time(of: parts) else { return nil }
        // The time must name the same digits: no 30 February, and no local time skipped by a
        // daylight-saving change. (Seconds are left out, as a leap second, :60, rolls over.)
        let back = timeZone.parts(of: named)
        for (letter, text) in found.digits where letter != UInt8(ascii: "S") {
            guard Array(Self.value(of: letter, in: back).utf8) == Array(text) else { return nil }
        }
        return named
    }
}
