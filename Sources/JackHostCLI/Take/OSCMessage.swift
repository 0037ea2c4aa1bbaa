import CLo

/// One OSC message as jackhost reads and writes it: a path, a type string (without the
/// leading comma) and typed arguments. Decoded and encoded by liblo, the one place CLo's
/// codec is called.
struct OSCMessage: Equatable, CustomStringConvertible {
    /// One argument; the types jackhost sends or reads, and `other` for the rest.
    enum Argument: Equatable {
        case string(String)
        case int32(Int32)
        case int64(Int64)
        case float(Float)
        /// Any other OSC type, by its type tag (jackhost reads none of them).
        case other(Character)

        /// The OSC type tag.
        var tag: Character {
            switch self {
            case .string: "s"
            case .int32: "i"
            case .int64: "h"
            case .float: "f"
            case .other(let tag): tag
            }
        }
    }

    let path: String
    let arguments: [Argument]

    /// `/jackhost/marker "cough"`: the path and its arguments, as a note shows them.
    var description: String {
        let values = arguments.map { argument -> String in
            switch argument {
            case .string(let text): "\"\(ValueParsing.shown(text))\""
            case .int32(let value): "\(value)"
            case .int64(let value): "\(value)"
            case .float(let value): "\(value)"
            case .other(let tag): "(\(tag))"
            }
        }
        return ([path] + values).joined(separator: " ")
    }

    /// The type string, `sihhf`, without the comma.
    var types: String { String(arguments.map(\.tag)) }

    init(path: String, arguments: [Argument] = []) {
        self.path = path
        self.arguments = arguments
    }

    /// Decodes one datagram with liblo (`lo_message_deserialise`); nil when it is not one valid
    /// OSC message (a bundle, a bad padding, a truncated argument, random bytes).
    init?(datagram: UnsafeRawBufferPointer) {
        guard let base = datagram.baseAddress, !datagram.isEmpty else { return nil }
        let data = UnsafeMutableRawPointer(mutating: base)
        var result: Int32 = 0
        guard let message = lo_message_deserialise(data, datagram.count, &result), result == 0 else { return nil }
        defer { lo_message_free(message) }
        guard let path = lo_get_path(data, datagram.count), let typeText = lo_message_get_types(message) else { return nil }
        let types = Array(String(cString: typeText))
        let count = Int(lo_message_get_argc(message))
        guard types.count == count, count == 0 || lo_message_get_argv(message) != nil else { return nil }
        let argv = lo_message_get_argv(message)
        var arguments: [Argument] = []
        for (index, tag) in types.enumerated() {
            guard let value = argv?[index] else { return nil }
            arguments.append(Self.argument(tag, at: UnsafeRawPointer(value)))
        }
        self.init(path: String(cString: path), arguments: arguments)
    }

    /// The value of one decoded argument (liblo has put it in host byte order).
    private static func argument(_ tag: Character, at value: UnsafeRawPointer) -> Argument {
        switch tag {
        case "s", "S": .string(String(cString: value.assumingMemoryBound(to: CChar.self)))
        case "i": .int32(value.loadUnaligned(as: Int32.self))
        case "h": .int64(value.loadUnaligned(as: Int64.self))
        case "f": .float(value.loadUnaligned(as: Float.self))
        default: .other(tag)
        }
    }

    /// The message as one datagram, encoded by liblo (`lo_message_serialise`); empty if liblo
    /// fails (out of memory, or an `other` argument, which jackhost never sends).
    func encoded() -> [UInt8] {
        guard let message = lo_message_new() else { return [] }
        defer { lo_message_free(message) }
        for argument in arguments {
            let added: Int32
            switch argument {
            case .string(let text): added = lo_message_add_string(message, text)
            case .int32(let value): added = lo_message_add_int32(message, value)
            case .int64(let value): added = lo_message_add_int64(message, value)
            case .float(let value): added = lo_message_add_float(message, value)
            case .other: return []
            }
            guard added == 0 else { return [] }
        }
        var size = lo_message_length(message, path)
        guard size > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: size)
        let written = bytes.withUnsafeMutableBytes { lo_message_serialise(message, path, $0.baseAddress, &size) }
        return written == nil ? [] : Array(bytes.prefix(size))
    }
}
