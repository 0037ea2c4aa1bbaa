/// Sample formats for recording and streaming.
public enum SampleFormat: String, Sendable, CaseIterable {
    /// 32-bit IEEE float, JACK's native sample type, passed through unchanged.
    case float32
    /// 16-bit signed integer PCM.
    case int16
    /// 24-bit signed integer PCM, packed into 3 bytes on the wire.
    case int24
    /// 32-bit signed integer PCM.
    case int32
    /// Signed 8.24 fixed point in 32 bits (the old iOS `AudioUnitSampleType`).
    case fixed8_24

    /// Parses a user-facing name. Accepts: "float32","f32","float" | "int16","s16","16" | "int24","s24","24" | "int32","s32","32" | "8.24","fixed8.24","fixed824". Case-insensitive. Returns nil otherwise.
    public init?(name: String) {
        switch name.lowercased() {
        case "float32", "f32", "float": self = .float32
        case "int16", "s16", "16": self = .int16
        case "int24", "s24", "24": self = .int24
        case "int32", "s32", "32": self = .int32
        case "8.24", "fixed8.24", "fixed824": self = .fixed8_24
        default: return nil
        }
    }

    /// Canonical CLI name: "f32","s16","s24","s32","8.24".
    public var name: String {
        switch self {
        case .float32: return "f32"
        case .int16: return "s16"
        case .int24: return "s24"
        case .int32: return "s32"
        case .fixed8_24: return "8.24"
        }
    }

    /// Bytes per sample on the wire (packed): 4, 2, 3, 4, 4.
    public var bytesPerSample: Int {
        switch self {
        case .float32: return 4
        case .int16: return 2
        case .int24: return 3
        case .int32: return 4
        case .fixed8_24: return 4
        }
    }
}
