import Glibc
import JackHostSupport

/// A take name whose file-name part holds time fields (`/var/log/audio/log-%Y%m%d-%H%M%S.wav`),
/// expanded from a local time and parsed back by ``SegmentRetention``.
///
/// Only a whitelist of fixed-width fields is accepted, so every name parses back to the time
/// that made it: `%Y` (4 digits), `%m`, `%d`, `%H`, `%M`, `%S`, `%y` (2 digits), `%j`
/// (3 digits) and `%%` (a literal `%`). The directory is taken literally and may hold no field;
/// neither may the extension.
struct NameTemplate: Sendable {
    /// One piece of the file name's stem.
    enum Token: Sendable, Equatable {
        /// Text copied as is (UTF-8).
        case literal([UInt8])
        /// A time field, by its letter (`Y`, `m`, …).
        case field(UInt8)
    }

    /// The accepted fields and their widths in digits.
    static let fieldWidths: [UInt8: Int] = [
        UInt8(ascii: "Y"): 4, UInt8(ascii: "m"): 2, UInt8(ascii: "d"): 2, UInt8(ascii: "H"): 2,
        UInt8(ascii: "M"): 2, UInt8(ascii: "S"): 2, UInt8(ascii: "j"): 3, UInt8(ascii: "y"): 2,
    ]
    /// The accepted fields in words, for messages.
    static let acceptedFields = "%Y %m %d %H %M %S %j %y or %%"

    /// The directory, literally ("" for the current one).
    let directory: String
    /// The file name without its extension.
    let tokens: [Token]
    /// The extension without its dot ("" for none).
    let fileExtension: String

    /// Parses `template`, refusing a field outside the whitelist, a field in the directory or
    /// the extension, and a path with no file name.
    init(parsing template: String) throws(RecorderError) {
        let directory = template.deletingLastPathComponent
        let fileName = String(template.dropFirst(directory.isEmpty ? 0 : directory.count + (directory == "/" ? 0 : 1)))
        guard !fileName.isEmpty else { throw .invalidTemplate(template: template, reason: "it has no file name") }
        guard !directory.contains("%") else {
            throw .invalidTemplate(template: template, reason: "fields are expanded in the file name only, not in its directory")
        }
        let (stem, fileExtension) = fileName.splittingPathExtension
        guard !fileExtension.contains("%") else {
            throw .invalidTemplate(template: template, reason: "put the fields before the extension (log-%Y%m%d.wav)")
        }
        var tokens: [Token] = []
        var literal: [UInt8] = []
        var bytes = Array(stem.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                literal.append(byte)
                continue
            }
            guard let letter = bytes.popFirst() else {
                throw .invalidTemplate(template: template, reason: "it ends with a lone %; write %% for a percent sign")
            }
            if letter == UInt8(ascii: "%") {
                literal.append(letter)
            } else if Self.fieldWidths[letter] != nil {
                if !literal.isEmpty { tokens.append(.literal(literal)) }
                literal = []
                tokens.append(.field(letter))
            } else {
                let shown = String(decoding: [UInt8(ascii: "%"), letter], as: UTF8.self)
                throw .invalidTemplate(template: template, reason: "\(shown) is not a supported field; use \(Self.acceptedFields)")
            }
        }
        if !literal.isEmpty { tokens.append(.literal(literal)) }
        self.directory = directory
        self.tokens = tokens
        self.fileExtension = fileExtension
    }

    /// Whether the name holds a full date (a year, and a month and day or a day of the year),
    /// so that the age of a file can be told from its name.
    var hasDate: Bool {
        let letters = Set(tokens.compactMap { token -> UInt8? in if case .field(let letter) = token { letter } else { nil } })
        let year = letters.contains(UInt8(ascii: "Y")) || letters.contains(UInt8(ascii: "y"))
        let day = (letters.contains(UInt8(ascii: "m")) && letters.contains(UInt8(ascii: "d"))) || letters.contains(UInt8(ascii: "j"))
        return year && day
    }

    /// The file name's stem for the local time `time`.
    func stem(at time: time_t) -> String {
        var seconds = time
        var parts = tm()
        localtime_r(&seconds, &parts)
        var text = ""
        for token in tokens {
            switch token {
            case .literal(let bytes): text += String(decoding: bytes, as: UTF8.self)
            case .field(let letter): text += Self.value(of: letter, in: parts)
            }
        }
        return text
    }

    /// The full path for the local time `time`.
    func path(at time: time_t) -> String {
        let name = fileExtension.isEmpty ? stem(at: time) : "\(stem(at: time)).\(fileExtension)"
        return TakeFiles.joined(directory, name)
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

    /// Matches the start of `name` against the stem and returns the local time it names and
    /// how many bytes it took; nil when it does not match or names no valid time.
    ///
    /// Fields the template lacks are taken at their latest (23:59:59 for a name with a date
    /// only), so a file is never judged older than it is. The time must expand back to the
    /// same digits, which refuses impossible dates (`20260230`).
    func time(atStartOf name: ArraySlice<UInt8>) -> (time: time_t, length: Int)? {
        guard hasDate else { return nil }
        var rest = name
        var values: [UInt8: Int] = [:]
        var digits: [UInt8: ArraySlice<UInt8>] = [:]
        for token in tokens {
            switch token {
            case .literal(let bytes):
                guard rest.starts(with: bytes) else { return nil }
                rest = rest.dropFirst(bytes.count)
            case .field(let letter):
                let width = Self.fieldWidths[letter] ?? 0
                let text = rest.prefix(width)
                guard text.count == width, text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
                let value = text.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                if let earlier = values[letter], earlier != value { return nil }
                values[letter] = value
                digits[letter] = text
                rest = rest.dropFirst(width)
            }
        }
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
        guard parts.tm_hour <= 23, parts.tm_min <= 59, parts.tm_sec <= 60 else { return nil }
        parts.tm_isdst = -1
        let time = mktime(&parts)
        guard time != -1 else { return nil }
        // The time must name the same digits: no 30 February. (Seconds are left out, as a leap
        // second, :60, rolls over.)
        var check = time
        var back = tm()
        localtime_r(&check, &back)
        for (letter, text) in digits where letter != UInt8(ascii: "S") {
            guard Array(Self.value(of: letter, in: back).utf8) == Array(text) else { return nil }
        }
        return (time, name.count - rest.count)
    }
}
