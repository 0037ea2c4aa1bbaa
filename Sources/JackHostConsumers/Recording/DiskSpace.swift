import Glibc
import JackHostSupport

/// The free space of the file system a path lives on, and how long it lasts at a data rate.
public enum DiskSpace {
    /// Bytes an unprivileged writer may still use on the file system holding `path` (or its
    /// directory, when the file does not exist yet); nil when it cannot be read.
    ///
    /// The corresponding C function is `statvfs`.
    public static func freeBytes(atPath path: String) -> Int? {
        var status = statvfs()
        let directory = path.deletingLastPathComponent
        for candidate in [path, directory.isEmpty ? "." : directory] where statvfs(candidate, &status) == 0 {
            return Int(status.f_bavail) * Int(status.f_frsize)
        }
        return nil
    }

    /// Seconds of recording left at `bytesPerSecond`, keeping `reserve` bytes free.
    public static func secondsLeft(atPath path: String, bytesPerSecond: Double, reserve: Int = 0) -> Double? {
        guard let free = freeBytes(atPath: path), bytesPerSecond > 0 else { return nil }
        return Double(max(0, free - reserve)) / bytesPerSecond
    }

    /// "512.0 MiB", "1.5 GiB": a size for messages.
    public static func describe(_ bytes: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) bytes" : "\(value.formatted(places: 1)) \(units[unit])"
    }
}
