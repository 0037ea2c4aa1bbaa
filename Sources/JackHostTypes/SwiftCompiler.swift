// The Swift compiler that compiled this module, as "MAJOR.MINOR.PATCH". Swift has no stable ABI
// on Linux, so the host and a Swift plugin compare theirs (the plugin SDK exports its copy as
// `jackhost_plugin_swift_version`): each side compiles this file with its own compiler, so each
// gets its own version. `#if compiler(>=...)` is the only way Swift source can see the compiler's
// version; the ladder below (generated: 6.0.0 to 7.9.9, newest first) picks the exact one.

/// The version of the Swift compiler this module was compiled with.
public enum SwiftCompiler {
    /// "MAJOR.MINOR.PATCH", e.g. "6.3.1"; "8.0 or newer" or "older than 6.0" outside the ladder.
    /// A NUL-terminated static string, so C code can read it as it is.
    public static var version: StaticString {
        #if compiler(>=8.0)
            "8.0 or newer"
        #elseif compiler(>=7.9.9)
            "7.9.9"
        #elseif compiler(>=7.9.8)
            "7.9.8"
        #elseif compiler(>=7.9.7)
            "7.9.7"
        #elseif compiler(>=7.9.6)
            "7.9.6"
        #elseif compiler(>=7.9.5)
            "7.9.5"
        #elseif compiler(>=7.9.4)
            "7.9.4"
        #elseif compiler(>=7.9.3)
            "7.9.3"
        #elseif compiler(>=7.9.2)
            "7.9.2"
        #elseif compiler(>=7.9.1)
            "7.9.1"
        #elseif compiler(>=7.9.0)
            "7.9.0"
        #elseif compiler(>=7.8.9)
            "7.8.9"
        #elseif compiler(>=7.8.8)
            "7.8.8"
        #elseif compiler(>=7.8.7)
            "7.8.7"
        #elseif compiler(>=7.8.6)
            "7.8.6"
        #elseif compiler(>=7.8.5)
            "7.8.5"
        #elseif compiler(>=7.8.4)
            "7.8.4"
        #elseif compiler(>=7.8.3)
            "7.8.3"
        #elseif compiler(>=7.8.2)
            "7.8.2"
        #elseif compiler(>=7.8.1)
            "7.8.1"
        #elseif compiler(>=7.8.0)
            "7.8.0"
        #elseif compiler(>=7.7.9)
            "7.7.9"
        #elseif compiler(>=7.7.8)
            "7.7.8"
        #elseif compiler(>=7.7.7)
            "7.7.7"
        #elseif compiler(>=7.7.6)
            "7.7.6"
        #elseif compiler(>=7.7.5)
            "7.7.5"
        #elseif compiler(>=7.7.4)
            "7.7.4"
        #elseif compiler(>=7.7.3)
            "7.7.3"
        #elseif compiler(>=7.7.2)
            "7.7.2"
        #elseif compiler(>=7.7.1)
            "7.7.1"
        #elseif compiler(>=7.7.0)
            "7.7.0"
        #elseif compiler(>=7.6.9)
            "7.6.9"
        #elseif compiler(>=7.6.8)
            "7.6.8"
        #elseif compiler(>=7.6.7)
            "7.6.7"
        #elseif compiler(>=7.6.6)
            "7.6.6"
        #elseif compiler(>=7.6.5)
            "7.6.5"
        #elseif compiler(>=7.6.4)
            "7.6.4"
        #elseif compiler(>=7.6.3)
            "7.6.3"
        #elseif compiler(>=7.6.2)
            "7.6.2"
        #elseif compiler(>=7.6.1)
            "7.6.1"
        #elseif compiler(>=7.6.0)
            "7.6.0"
        #elseif compiler(>=7.5.9)
            "7.5.9"
        #elseif compiler(>=7.5.8)
            "7.5.8"
        #elseif compiler(>=7.5.7)
            "7.5.7"
        #elseif compiler(>=7.5.6)
            "7.5.6"
        #elseif compiler(>=7.5.5)
            "7.5.5"
        #elseif compiler(>=7.5.4)
            "7.5.4"
        #elseif compiler(>=7.5.3)
            "7.5.3"
        #elseif compiler(>=7.5.2)
            "7.5.2"
        #elseif compiler(>=7.5.1)
            "7.5.1"
        #elseif compiler(>=7.5.0)
            "7.5.0"
        #elseif compiler(>=7.4.9)
            "7.4.9"
        #elseif compiler(>=7.4.8)
            "7.4.8"
        #elseif compiler(>=7.4.7)
            "7.4.7"
        #elseif compiler(>=7.4.6)
            "7.4.6"
        #elseif compiler(>=7.4.5)
            "7.4.5"
        #elseif compiler(>=7.4.4)
            "7.4.4"
        #elseif compiler(>=7.4.3)
            "7.4.3"
        #elseif compiler(>=7.4.2)
            "7.4.2"
        #elseif compiler(>=7.4.1)
            "7.4.1"
        #elseif compiler(>=7.4.0)
            "7.4.0"
        #elseif compiler(>=7.3.9)
            "7.3.9"
        #elseif compiler(>=7.3.8)
            "7.3.8"
        #elseif compiler(>=7.3.7)
            "7.3.7"
        #elseif compiler(>=7.3.6)
            "7.3.6"
        #elseif compiler(>=7.3.5)
            "7.3.5"
        #elseif compiler(>=7.3.4)
            "7.3.4"
        #elseif compiler(>=7.3.3)
            "7.3.3"
        #elseif compiler(>=7.3.2)
            "7.3.2"
        #elseif compiler(>=7.3.1)
            "7.3.1"
        #elseif compiler(>=7.3.0)
            "7.3.0"
        #elseif compiler(>=7.2.9)
            "7.2.9"
        #elseif compiler(>=7.2.8)
            "7.2.8"
        #elseif compiler(>=7.2.7)
            "7.2.7"
        #elseif compiler(>=7.2.6)
            "7.2.6"
        #elseif compiler(>=7.2.5)
            "7.2.5"
        #elseif compiler(>=7.2.4)
            "7.2.4"
        #elseif compiler(>=7.2.3)
            "7.2.3"
        #elseif compiler(>=7.2.2)
            "7.2.2"
        #elseif compiler(>=7.2.1)
            "7.2.1"
        #elseif compiler(>=7.2.0)
            "7.2.0"
        #elseif compiler(>=7.1.9)
            "7.1.9"
        #elseif compiler(>=7.1.8)
            "7.1.8"
        #elseif compiler(>=7.1.7)
            "7.1.7"
        #elseif compiler(>=7.1.6)
            "7.1.6"
        #elseif compiler(>=7.1.5)
            "7.1.5"
        #elseif compiler(>=7.1.4)
            "7.1.4"
        #elseif compiler(>=7.1.3)
            "7.1.3"
        #elseif compiler(>=7.1.2)
            "7.1.2"
        #elseif compiler(>=7.1.1)
            "7.1.1"
        #elseif compiler(>=7.1.0)
            "7.1.0"
        #elseif compiler(>=7.0.9)
            "7.0.9"
        #elseif compiler(>=7.0.8)
            "7.0.8"
        #elseif compiler(>=7.0.7)
            "7.0.7"
        #elseif compiler(>=7.0.6)
            "7.0.6"
        #elseif compiler(>=7.0.5)
            "7.0.5"
        #elseif compiler(>=7.0.4)
            "7.0.4"
        #elseif compiler(>=7.0.3)
            "7.0.3"
        #elseif compiler(>=7.0.2)
            "7.0.2"
        #elseif compiler(>=7.0.1)
            "7.0.1"
        #elseif compiler(>=7.0.0)
            "7.0.0"
        #elseif compiler(>=6.9.9)
            "6.9.9"
        #elseif compiler(>=6.9.8)
            "6.9.8"
        #elseif compiler(>=6.9.7)
            "6.9.7"
        #elseif compiler(>=6.9.6)
            "6.9.6"
        #elseif compiler(>=6.9.5)
            "6.9.5"
        #elseif compiler(>=6.9.4)
            "6.9.4"
        #elseif compiler(>=6.9.3)
            "6.9.3"
        #elseif compiler(>=6.9.2)
            "6.9.2"
        #elseif compiler(>=6.9.1)
            "6.9.1"
        #elseif compiler(>=6.9.0)
            "6.9.0"
        #elseif compiler(>=6.8.9)
            "6.8.9"
        #elseif compiler(>=6.8.8)
            "6.8.8"
        #elseif compiler(>=6.8.7)
            "6.8.7"
        #elseif compiler(>=6.8.6)
            "6.8.6"
        #elseif compiler(>=6.8.5)
            "6.8.5"
        #elseif compiler(>=6.8.4)
            "6.8.4"
        #elseif compiler(>=6.8.3)
            "6.8.3"
        #elseif compiler(>=6.8.2)
            "6.8.2"
        #elseif compiler(>=6.8.1)
            "6.8.1"
        #elseif compiler(>=6.8.0)
            "6.8.0"
        #elseif compiler(>=6.7.9)
            "6.7.9"
        #elseif compiler(>=6.7.8)
            "6.7.8"
        #elseif compiler(>=6.7.7)
            "6.7.7"
        #elseif compiler(>=6.7.6)
            "6.7.6"
        #elseif compiler(>=6.7.5)
            "6.7.5"
        #elseif compiler(>=6.7.4)
            "6.7.4"
        #elseif compiler(>=6.7.3)
            "6.7.3"
        #elseif compiler(>=6.7.2)
            "6.7.2"
        #elseif compiler(>=6.7.1)
            "6.7.1"
        #elseif compiler(>=6.7.0)
            "6.7.0"
        #elseif compiler(>=6.6.9)
            "6.6.9"
        #elseif compiler(>=6.6.8)
            "6.6.8"
        #elseif compiler(>=6.6.7)
            "6.6.7"
        #elseif compiler(>=6.6.6)
            "6.6.6"
        #elseif compiler(>=6.6.5)
            "6.6.5"
        #elseif compiler(>=6.6.4)
            "6.6.4"
        #elseif compiler(>=6.6.3)
            "6.6.3"
        #elseif compiler(>=6.6.2)
            "6.6.2"
        #elseif compiler(>=6.6.1)
            "6.6.1"
        #elseif compiler(>=6.6.0)
            "6.6.0"
        #elseif compiler(>=6.5.9)
            "6.5.9"
        #elseif compiler(>=6.5.8)
            "6.5.8"
        #elseif compiler(>=6.5.7)
            "6.5.7"
        #elseif compiler(>=6.5.6)
            "6.5.6"
        #elseif compiler(>=6.5.5)
            "6.5.5"
        #elseif compiler(>=6.5.4)
            "6.5.4"
        #elseif compiler(>=6.5.3)
            "6.5.3"
        #elseif compiler(>=6.5.2)
            "6.5.2"
        #elseif compiler(>=6.5.1)
            "6.5.1"
        #elseif compiler(>=6.5.0)
            "6.5.0"
        #elseif compiler(>=6.4.9)
            "6.4.9"
        #elseif compiler(>=6.4.8)
            "6.4.8"
        #elseif compiler(>=6.4.7)
            "6.4.7"
        #elseif compiler(>=6.4.6)
            "6.4.6"
        #elseif compiler(>=6.4.5)
            "6.4.5"
        #elseif compiler(>=6.4.4)
            "6.4.4"
        #elseif compiler(>=6.4.3)
            "6.4.3"
        #elseif compiler(>=6.4.2)
            "6.4.2"
        #elseif compiler(>=6.4.1)
            "6.4.1"
        #elseif compiler(>=6.4.0)
            "6.4.0"
        #elseif compiler(>=6.3.9)
            "6.3.9"
        #elseif compiler(>=6.3.8)
            "6.3.8"
        #elseif compiler(>=6.3.7)
            "6.3.7"
        #elseif compiler(>=6.3.6)
            "6.3.6"
        #elseif compiler(>=6.3.5)
            "6.3.5"
        #elseif compiler(>=6.3.4)
            "6.3.4"
        #elseif compiler(>=6.3.3)
            "6.3.3"
        #elseif compiler(>=6.3.2)
            "6.3.2"
        #elseif compiler(>=6.3.1)
            "6.3.1"
        #elseif compiler(>=6.3.0)
            "6.3.0"
        #elseif compiler(>=6.2.9)
            "6.2.9"
        #elseif compiler(>=6.2.8)
            "6.2.8"
        #elseif compiler(>=6.2.7)
            "6.2.7"
        #elseif compiler(>=6.2.6)
            "6.2.6"
        #elseif compiler(>=6.2.5)
            "6.2.5"
        #elseif compiler(>=6.2.4)
            "6.2.4"
        #elseif compiler(>=6.2.3)
            "6.2.3"
        #elseif compiler(>=6.2.2)
            "6.2.2"
        #elseif compiler(>=6.2.1)
            "6.2.1"
        #elseif compiler(>=6.2.0)
            "6.2.0"
        #elseif compiler(>=6.1.9)
            "6.1.9"
        #elseif compiler(>=6.1.8)
            "6.1.8"
        #elseif compiler(>=6.1.7)
            "6.1.7"
        #elseif compiler(>=6.1.6)
            "6.1.6"
        #elseif compiler(>=6.1.5)
            "6.1.5"
        #elseif compiler(>=6.1.4)
            "6.1.4"
        #elseif compiler(>=6.1.3)
            "6.1.3"
        #elseif compiler(>=6.1.2)
            "6.1.2"
        #elseif compiler(>=6.1.1)
            "6.1.1"
        #elseif compiler(>=6.1.0)
            "6.1.0"
        #elseif compiler(>=6.0.9)
            "6.0.9"
        #elseif compiler(>=6.0.8)
            "6.0.8"
        #elseif compiler(>=6.0.7)
            "6.0.7"
        #elseif compiler(>=6.0.6)
            "6.0.6"
        #elseif compiler(>=6.0.5)
            "6.0.5"
        #elseif compiler(>=6.0.4)
            "6.0.4"
        #elseif compiler(>=6.0.3)
            "6.0.3"
        #elseif compiler(>=6.0.2)
            "6.0.2"
        #elseif compiler(>=6.0.1)
            "6.0.1"
        #elseif compiler(>=6.0.0)
            "6.0.0"
        #else
            "older than 6.0"
        #endif
    }
}
