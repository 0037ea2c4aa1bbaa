// TextFormatting.swift
//
// The two pieces of Foundation's string formatting that jackhost's output uses, without
// Foundation (see Lock.swift): fixed-point decimals, and padding a column to a width.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Double {
    /// The value with exactly `places` digits after the point, rounded as printf's `%.Nf`
    /// rounds (for example `(-6.0206).formatted(places: 2)` is "-6.02").
    package func formatted(places: Int) -> String {
        precondition((0...17).contains(places), "0 to 17 decimal places")
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            // snprintf is variadic, which Swift cannot call; vsnprintf takes a va_list.
            let written = withVaList([Int32(places), self]) { vsnprintf(buffer.baseAddress!, 64, "%.*f", $0) }
            precondition(written >= 0 && written < 64, "a Double with \(places) places fits 64 bytes")
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: Int(written)), as: UTF8.self)
        }
    }
}

extension Float {
    /// ``Swift/Double/formatted(places:)`` for a Float.
    package func formatted(places: Int) -> String { Double(self).formatted(places: places) }
}

extension String {
    /// The string followed by spaces up to `width` characters; unchanged when it is longer.
    package func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

extension BinaryInteger {
    /// The decimal digits padded with leading zeros to at least `width` (3, 4 -> "0003").
    package func zeroPadded(to width: Int) -> String {
        let digits = String(self.magnitude)
        let padding = String(repeating: "0", count: Swift.max(0, width - digits.count))
        return (self < 0 ? "-" : "") + padding + digits
    }
}

extension String {
    /// The path without its last component ("dir/take.wav" -> "dir", "take.wav" -> "",
    /// "/take.wav" -> "/"), as NSString's deletingLastPathComponent for these cases.
    package var deletingLastPathComponent: String {
        guard let slash = lastIndex(of: "/") else { return "" }
        return slash == startIndex ? "/" : String(self[..<slash])
    }

    /// The path split at the last component's extension: ("dir/take", "wav") for
    /// "dir/take.wav"; no extension (none, or a leading dot only, as in ".wav") gives (self, "").
    package var splittingPathExtension: (stem: String, extension: String) {
        let component = self[(lastIndex(of: "/").map { index(after: $0) } ?? startIndex)...]
        guard let dot = component.lastIndex(of: "."), dot != component.startIndex else { return (self, "") }
        return (String(self[..<dot]), String(self[index(after: dot)...]))
    }
}
