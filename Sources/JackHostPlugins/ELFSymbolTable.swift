import Glibc

/// The dynamic symbol table (`.dynsym` and its string table) of an ELF shared object, read
/// from the file with plain POSIX reads, without loading it.
///
/// The plugin loader reads it before `dlopen`, so a file that is not a shared object for this
/// machine, or whose entry symbol is not a function, is refused before any of its code runs
/// (`dlopen` runs a library's constructors; calling a data symbol as a function crashes).
///
/// Every offset and size in the file is checked against the file's size before it is used,
/// and no table over ``maximumTableBytes`` is read, so a truncated or hostile file gives a
/// ``Failure``, never a crash or a huge allocation. It is a check of what the file says, not a
/// sandbox: the dynamic linker reads the program headers, which a hostile file can make disagree
/// with the section headers read here.
///
/// Only 64-bit ELF is read; ``host`` is nil where that is not this process's format.
struct ELFSymbolTable {
    /// Why a file was refused.
    enum Failure: Error, Equatable, Sendable {
        /// The file could not be opened or read, or is not a regular file; the text says why.
        case unreadable(String)
        /// The file does not start with the ELF magic; the text says what it starts with.
        case notELF(String)
        /// An ELF file for another class, byte order or machine than this process.
        case wrongTarget(found: Target, host: Target)
        /// An ELF file of another type than a shared object (an object file, an executable, a core dump).
        case notASharedObject(String)
        /// An ELF file that is truncated, inconsistent, or has no dynamic symbol table to check.
        case malformed(String)
    }

    /// The class, byte order and machine of an ELF file, or of this process.
    struct Target: Equatable, Sendable, CustomStringConvertible {
        /// `EI_CLASS`: 1 for 32-bit, 2 for 64-bit.
        let elfClass: UInt8
        /// `EI_DATA`: 1 for little-endian, 2 for big-endian.
        let byteOrder: UInt8
        /// `e_machine`, such as 62 (`EM_X86_64`) or 183 (`EM_AARCH64`).
        let machine: UInt16

        /// For example "64-bit little-endian x86-64".
        var description: String {
            let bits = [1: "32-bit", 2: "64-bit"][elfClass] ?? "ELF class \(elfClass)"
            let order = [1: "little-endian", 2: "big-endian"][byteOrder] ?? "byte order \(byteOrder)"
            return "\(bits) \(order) \(Self.machineName(machine))"
        }

        /// A readable name for the machines a plugin is likely to be built for.
        static func machineName(_ machine: UInt16) -> String {
            switch machine {
            case 3: return "x86 (i386)"
            case 8: return "MIPS"
            case 20: return "PowerPC"
            case 21: return "PowerPC64"
            case 22: return "s390"
            case 40: return "ARM"
            case 62: return "x86-64"
            case 183: return "AArch64 (arm64)"
            case 243: return "RISC-V"
            case 258: return "LoongArch"
            default: return "machine \(machine)"
            }
        }
    }

    /// What loading a plugin needs to know about one dynamic symbol.
    struct Symbol: Equatable, Sendable {
        /// The symbol's type (`ELF64_ST_TYPE`), as far as calling it goes.
        enum Kind: Equatable, Sendable {
            /// `STT_FUNC`, or `STT_GNU_IFUNC` (10), which the dynamic linker resolves to a function.
            case function
            /// `STT_OBJECT`: data.
            case object
            /// Any other type (`STT_NOTYPE`, `STT_TLS`, ...), with its number.
            case other(UInt8)
        }

        /// Its type.
        let kind: Kind
        /// Whether this file defines it (`st_shndx != SHN_UNDEF`) rather than importing it.
        let isDefined: Bool
        /// Whether `dlsym` can find it here: defined, bound `GLOBAL`, `WEAK` or `GNU_UNIQUE`, and
        /// of `DEFAULT` or `PROTECTED` visibility.
        let isExported: Bool
    }

    /// The largest `.dynsym` or string table read (64 MiB); a real plugin's are kilobytes.
    static let maximumTableBytes = 64 << 20
    /// The largest section header table read (16 MiB, 262,144 sections).
    static let maximumSectionTableBytes = 16 << 20

    /// This process's ELF class, byte order and machine, or nil where this reader cannot check
    /// plugins (it reads 64-bit ELF only, and knows the machine numbers of x86-64 and arm64).
    static let host: Target? = {
        #if arch(x86_64)
            return Target(elfClass: 2, byteOrder: 1, machine: 62)
        #elseif arch(arm64)
            return Target(elfClass: 2, byteOrder: 1, machine: 183)
        #else
            return nil
        #endif
    }()

    /// The `.dynsym` section's bytes, `entrySize` per symbol.
    private let symbolBytes: [UInt8]
    /// The string table `.dynsym` links to.
    private let stringBytes: [UInt8]
    /// The number of entries in `.dynsym`, the null symbol 0 included.
    let symbolCount: Int

    /// The size of an `Elf64_Sym`.
    private static let entrySize = 24
    /// The size of an `Elf64_Shdr`.
    private static let sectionHeaderSize = 64
    /// The size of an `Elf64_Ehdr`.
    private static let headerSize = 64

    /// Reads the file's header and dynamic symbol table, checking that it is a shared object for
    /// `host`.
    init(path: String, host: Target) throws(Failure) {
        let file = try ReadOnlyFile(path: path)
        defer { file.close() }
        let header = try Self.checkedHeader(file, host: host)
        let sections = try Self.sectionHeaders(file, header: header)
        let count = sections.count / Self.sectionHeaderSize
        /// The fields of section header `index` this reader uses (`index` is below `count`).
        func section(_ index: Int) -> (type: UInt32, link: Int, offset: UInt64, size: UInt64, entrySize: UInt64) {
            let base = index * Self.sectionHeaderSize
            return (
                sections.load(UInt32.self, at: base + 4), Int(sections.load(UInt32.self, at: base + 40)),
                sections.load(UInt64.self, at: base + 24), sections.load(UInt64.self, at: base + 32),
                sections.load(UInt64.self, at: base + 56)
            )
        }
        guard let dynsym = (0..<count).first(where: { section($0).type == 11 }) else {  // SHT_DYNSYM
            throw .malformed("it has no dynamic symbol table (.dynsym), so it exports nothing")
        }
        let symbols = section(dynsym)
        guard symbols.entrySize == UInt64(Self.entrySize) else {
            throw .malformed(".dynsym entries are \(symbols.entrySize) bytes, not \(Self.entrySize)")
        }
        guard symbols.link > 0, symbols.link < count, section(symbols.link).type == 3 else {  // SHT_STRTAB
            throw .malformed(".dynsym links to section \(symbols.link), which is not a string table")
        }
        let strings = section(symbols.link)
        symbolBytes = try file.read(offset: symbols.offset, count: symbols.size, what: ".dynsym", limit: Self.maximumTableBytes)
        stringBytes = try file.read(offset: strings.offset, count: strings.size, what: ".dynstr", limit: Self.maximumTableBytes)
        symbolCount = symbolBytes.count / Self.entrySize
    }

    /// The dynamic symbol called `name`, or nil if `.dynsym` has none. When several entries
    /// have the name (symbol versions), the first one `dlsym` could find wins.
    func symbol(named name: String) -> Symbol? {
        let wanted = Array(name.utf8)
        var firstMatch: Symbol?
        for index in 1..<max(symbolCount, 1) {
            let base = index * Self.entrySize
            guard nameMatches(wanted, at: Int(symbolBytes.load(UInt32.self, at: base))) else { continue }
            let info = symbolBytes[base + 4], visibility = symbolBytes[base + 5] & 0x3
            let isDefined = symbolBytes.load(UInt16.self, at: base + 6) != 0  // SHN_UNDEF
            let binding = info >> 4, type = info & 0xf
            // STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE; STV_DEFAULT, STV_PROTECTED.
            let isExported = isDefined && [1, 2, 10].contains(binding) && (visibility == 0 || visibility == 3)
            let kind: Symbol.Kind =
                switch type {
                case 2, 10: .function  // STT_FUNC, STT_GNU_IFUNC
                case 1: .object  // STT_OBJECT
                default: .other(type)
                }
            let symbol = Symbol(kind: kind, isDefined: isDefined, isExported: isExported)
            if isExported { return symbol }
            if firstMatch == nil { firstMatch = symbol }
        }
        return firstMatch
    }

    /// Whether the NUL-terminated string at `offset` in the string table is `wanted`.
    private func nameMatches(_ wanted: [UInt8], at offset: Int) -> Bool {
        guard offset < stringBytes.count, stringBytes.count - offset > wanted.count else { return false }
        for (index, byte) in wanted.enumerated() where stringBytes[offset + index] != byte { return false }
        return stringBytes[offset + wanted.count] == 0
    }

    // MARK: Reading the file

    /// The ELF header, after checking the magic, the target and the type.
    private static func checkedHeader(_ file: ReadOnlyFile, host: Target) throws(Failure) -> [UInt8] {
        let start = try file.read(offset: 0, count: UInt64(min(file.size, UInt64(headerSize))), what: "the ELF header", limit: headerSize)
        let magic: [UInt8] = [0x7f, 0x45, 0x4c, 0x46]
        guard start.starts(with: magic) else { throw .notELF(describeStart(start, fileSize: file.size)) }
        // e_ident, e_type and e_machine sit at the same offsets in every ELF class.
        guard start.count >= 20 else {
            throw .malformed("the file is \(file.size) bytes, too short for an ELF header; it may have been cut short")
        }
        guard (1...2).contains(start[4]), (1...2).contains(start[5]) else {
            throw .malformed("its ELF class byte is \(start[4]) and its byte order byte \(start[5]); each must be 1 or 2")
        }
        let machine =
            start[5] == 2 ? UInt16(start[18]) << 8 | UInt16(start[19]) : UInt16(start[19]) << 8 | UInt16(start[18])
        let found = Target(elfClass: start[4], byteOrder: start[5], machine: machine)
        guard found == host else { throw .wrongTarget(found: found, host: host) }
        guard start[6] == 1 else { throw .malformed("its ELF version is \(start[6]), not 1") }
        guard start.count == headerSize else {
            throw .malformed("the file is \(file.size) bytes, shorter than the \(headerSize)-byte ELF header; it may have been cut short")
        }
        switch start.load(UInt16.self, at: 16) {
        case 3: break  // ET_DYN
        case 1: throw .notASharedObject("it is an ELF relocatable object, a .o file")
        case 2: throw .notASharedObject("it is an ELF executable, not a shared library")
        case 4: throw .notASharedObject("it is an ELF core dump")
        case let type: throw .notASharedObject("its ELF type is \(type), not a shared object (3)")
        }
        return start
    }

    /// The section header table, every entry within the file.
    private static func sectionHeaders(_ file: ReadOnlyFile, header: [UInt8]) throws(Failure) -> [UInt8] {
        let offset = header.load(UInt64.self, at: 40)  // e_shoff
        let entrySize = header.load(UInt16.self, at: 58)  // e_shentsize
        var count = UInt64(header.load(UInt16.self, at: 60))  // e_shnum
        guard offset != 0 else {
            throw .malformed("it has no section headers (stripped with sstrip?), so its dynamic symbols cannot be checked")
        }
        guard entrySize == sectionHeaderSize else {
            throw .malformed("its section headers are \(entrySize) bytes, not \(sectionHeaderSize)")
        }
        if count == 0 {
            // More than 65,279 sections: section 0's sh_size holds the count.
            let first = try file.read(offset: offset, count: UInt64(sectionHeaderSize), what: "section header 0", limit: sectionHeaderSize)
            count = first.load(UInt64.self, at: 32)
        }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: UInt64(sectionHeaderSize))
        guard !overflow, bytes > 0 else { throw .malformed("it declares \(count) sections") }
        return try file.read(offset: offset, count: bytes, what: "the section header table", limit: maximumSectionTableBytes)
    }

    /// What a file that is not ELF starts with, in words.
    private static func describeStart(_ start: [UInt8], fileSize: UInt64) -> String {
        if fileSize < 4 { return "it is \(fileSize) bytes long, too short to be ELF" }
        if start.starts(with: Array("!<arch>".utf8)) { return "it is a static library (an ar archive), not a shared one" }
        let first = start.prefix(4)
        let hex = first.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(separator: " ")
        if first.allSatisfy({ (0x20..<0x7f).contains($0) }) {
            return "it starts with the text \"\(String(decoding: first, as: UTF8.self))\" (\(hex)), not the ELF magic 7f 45 4c 46"
        }
        return "it starts with the bytes \(hex), not the ELF magic 7f 45 4c 46"
    }
}

/// A regular file opened read-only, read at offsets with `pread`, every read checked against
/// the file's size.
private struct ReadOnlyFile {
    /// The open file descriptor; ``close()`` closes it.
    let descriptor: Int32
    /// The file's size when it was opened: no read goes past it.
    let size: UInt64

    /// Opens `path` without blocking (a FIFO must not hang the loader) and checks it is a regular file.
    init(path: String) throws(ELFSymbolTable.Failure) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .unreadable("cannot open it: \(String(cString: strerror(errno)))") }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = Glibc.close(descriptor)
            throw .unreadable("cannot read its size: \(reason)")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            _ = Glibc.close(descriptor)
            throw .unreadable("it is not a regular file")
        }
        self.descriptor = descriptor
        self.size = UInt64(status.st_size)
    }

    /// Closes the descriptor; call it once, when done reading.
    func close() { _ = Glibc.close(descriptor) }

    /// `count` bytes at `offset`, refusing a range past the end of the file or over `limit` bytes.
    func read(offset: UInt64, count: UInt64, what: String, limit: Int) throws(ELFSymbolTable.Failure) -> [UInt8] {
        guard count <= UInt64(limit) else {
            throw .malformed("\(what) is \(count) bytes, over the \(limit)-byte limit of this check")
        }
        let (end, overflow) = offset.addingReportingOverflow(count)
        guard !overflow, end <= size else {
            throw .malformed("\(what) (\(count) bytes at offset \(offset)) runs past the end of the \(size)-byte file; it may have been cut short")
        }
        var bytes = [UInt8](repeating: 0, count: Int(count))
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else {
                let reason = result < 0 ? String(cString: strerror(errno)) : "the file got shorter"
                throw .unreadable("cannot read \(what): \(reason)")
            }
            done += result
        }
        return bytes
    }
}

extension [UInt8] {
    /// The integer at `offset` in this machine's byte order (the reader checks the file's first).
    fileprivate func load<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count, "ELF read out of bounds")
        return withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
    }
}
