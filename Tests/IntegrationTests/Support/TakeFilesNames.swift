import Foundation

/// Segment names as the recorder makes them.
enum TakeFilesNames {
    static func numbered(_ path: String, _ index: Int) -> String {
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().path
        return "\(stem)-\(String(format: "%04d", index)).\(url.pathExtension)"
    }
}
