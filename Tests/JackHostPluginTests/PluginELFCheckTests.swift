import Foundation
import JackHost
import XCTest

@testable import JackHostPlugins

/// The check of a plugin file's ELF dynamic symbol table that runs before `dlopen`: files that
/// are not shared objects for this machine, or whose entry symbol is missing or not a function,
/// are refused without any of their code running, and a hostile file cannot crash the reader.
final class PluginELFCheckTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws { directory = try CPluginBuilder.temporaryDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// This machine, as the reader checks it.
    private var host: ELFSymbolTable.Target {
        get throws { try XCTUnwrap(ELFSymbolTable.host, "the ELF check runs on 64-bit x86-64 and arm64 only") }
    }

    /// A library that exports `jackhost_plugin_descriptor` as an int, with a constructor that
    /// creates `marker`: the marker proves whether `dlopen` ran.
    private func buildDataEntryLibrary(marker: String) throws -> String {
        let source = """
            #include <stdio.h>
            __attribute__((visibility("default"))) const int jackhost_plugin_descriptor = 1;
            __attribute__((constructor)) static void loaded(void) {
                FILE *file = fopen(MARKER_PATH, "w");
                if (file != NULL) fclose(file);
            }
            """
        return try CPluginBuilder.build(source: source, name: "DataEntry", defines: ["MARKER_PATH=\"\(marker)\""], in: directory)
    }

    /// Whether the dynamic linker has the image at `path` loaded in this process.
    private func isLoaded(_ path: String) -> Bool {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD) else { return false }
        dlclose(handle)  // drops only the reference RTLD_NOLOAD took
        return true
    }

    /// Opens `path` as `jackhost plugin inspect` does and returns the refusal.
    private func refusal(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> PluginError? {
        do {
            _ = try PluginLibrary.open(path: path)
            XCTFail("\(path) was accepted", file: file, line: line)
            return nil
        } catch {
            XCTAssertFalse(error.isUsageError, "a broken plugin is a failure (exit 1): \(error)", file: file, line: line)
            XCTAssertFalse(error.description.contains("\n"), "one line: \(error)", file: file, line: line)
            XCTAssertTrue(error.description.contains(path), "names the file: \(error)", file: file, line: line)
            return error
        }
    }

    /// Overwrites bytes of `path` at `offset`.
    private func patch(_ path: String, at offset: Int, with bytes: [UInt8]) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        data.replaceSubrange(offset..<offset + bytes.count, with: bytes)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Little-endian bytes of `value`.
    private func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    /// The file offset of the section header of `.dynsym` (found the way the reader finds it).
    private func dynsymHeaderOffset(_ path: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> Int {
            Int(data.subdata(in: offset..<offset + MemoryLayout<T>.size).withUnsafeBytes { $0.loadUnaligned(as: T.self) })
        }
        let table = integer(UInt64.self, at: 40), count = integer(UInt16.self, at: 60)
        let index = try XCTUnwrap((0..<count).first { integer(UInt32.self, at: table + $0 * 64 + 4) == 11 }, "no .dynsym")
        return table + index * 64
    }

    // MARK: Good plugins

    func testAGoodCPluginPassesTheCheckAndLoads() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        let table = try ELFSymbolTable(path: library, host: host)
        XCTAssertEqual(
            table.symbol(named: "jackhost_plugin_descriptor"), .init(kind: .function, isDefined: true, isExported: true))
        XCTAssertNil(table.symbol(named: "cpeak_create"), "static functions are not in .dynsym")
        XCTAssertNil(table.symbol(named: "jackhost_plugin_descripto"), "a prefix is not the name")
        XCTAssertEqual(try PluginLibrary.open(path: library).name, "CPeak")
    }

    /// What the documentation promises: loading (and so inspecting) a library runs its constructors,
    /// but never `create`.
    func testInspectingAGoodPluginRunsItsConstructorsButCreatesNothing() throws {
        let marker = path("constructed")
        let source =
            ProbePlugin.source + """

                #include <stdio.h>
                __attribute__((constructor)) static void loaded(void) {
                    FILE *file = fopen(MARKER_PATH, "w");
                    if (file != NULL) fclose(file);
                }
                """
        let library = try CPluginBuilder.build(
            source: source, name: "Constructed", defines: ["MARKER_PATH=\"\(marker)\""], in: directory)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker))
        _ = try PluginLibrary.open(path: library)
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker), "dlopen ran the constructor")
        XCTAssertEqual(try ProbeReader(path: library)["creates"], 0)
    }

    // MARK: The entry symbol

    func testADataEntrySymbolIsRefusedBeforeTheLibraryIsLoaded() throws {
        let marker = path("loaded")
        let library = try buildDataEntryLibrary(marker: marker)
        XCTAssertEqual(
            try ELFSymbolTable(path: library, host: host).symbol(named: "jackhost_plugin_descriptor"),
            .init(kind: .object, isDefined: true, isExported: true))

        // As `jackhost plugin inspect` opens it, then as `--plugin` loads it. Reaching the next line
        // at all means nothing called the int as a function.
        let inspected = refusal(library)
        XCTAssertEqual(inspected, .entryNotAFunction(path: library, found: "data"))
        XCTAssertEqual(
            inspected?.description,
            "plugin \(library) exports jackhost_plugin_descriptor as data, not a function; export "
                + "`const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void)` (see docs/PLUGINS.md)")
        XCTAssertThrowsError(try LoadedPlugin.load(PluginSpecification(parsing: library))) { error in
            XCTAssertEqual(error as? PluginError, .entryNotAFunction(path: library, found: "data"))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the library's constructor ran: it was dlopened")
        XCTAssertFalse(isLoaded(library), "the library was dlopened")
    }

    func testAThreadLocalEntrySymbolIsRefused() throws {
        let library = try CPluginBuilder.build(
            source: "__attribute__((visibility(\"default\"))) _Thread_local int jackhost_plugin_descriptor;\n",
            name: "TLSEntry", in: directory)
        XCTAssertEqual(refusal(library), .entryNotAFunction(path: library, found: "thread-local data"))
        XCTAssertFalse(isLoaded(library))
    }

    func testMissingHiddenAndImportedEntrySymbolsAreMissing() throws {
        let none = try CPluginBuilder.build(
            source: "__attribute__((visibility(\"default\"))) int answer(void) { return 42; }\n", name: "None", in: directory)
        let hidden = try CPluginBuilder.build(
            source: "__attribute__((visibility(\"default\"))) int answer(void) { return 42; }\n"
                + "__attribute__((visibility(\"hidden\"))) const void *jackhost_plugin_descriptor(void) { return 0; }\n",
            name: "Hidden", in: directory)
        // Declared, called, never defined: .dynsym lists it as undefined (an import).
        let imported = try CPluginBuilder.build(
            source: "extern const void *jackhost_plugin_descriptor(void);\n"
                + "__attribute__((visibility(\"default\"))) const void *forward(void) { return jackhost_plugin_descriptor(); }\n",
            name: "Imported", in: directory)
        XCTAssertNil(try ELFSymbolTable(path: none, host: host).symbol(named: "jackhost_plugin_descriptor"))
        XCTAssertNil(try ELFSymbolTable(path: hidden, host: host).symbol(named: "jackhost_plugin_descriptor"))
        let importedSymbol = try ELFSymbolTable(path: imported, host: host).symbol(named: "jackhost_plugin_descriptor")
        XCTAssertEqual(importedSymbol?.isDefined, false)
        XCTAssertEqual(importedSymbol?.isExported, false)
        for library in [none, hidden, imported] {
            let error = refusal(library)
            XCTAssertEqual(error, .missingEntrySymbol(path: library))
            XCTAssertEqual(
                error?.description,
                "plugin \(library) does not export jackhost_plugin_descriptor; it is not a JackHost plugin "
                    + "(see docs/PLUGINS.md for the export line)")
            XCTAssertFalse(isLoaded(library), "\(library) was dlopened")
        }
    }

    // MARK: Files that are not plugins for this machine

    func testATextFileRenamedSoIsNotELF() throws {
        let text = path("libNotes.so")
        try "not an ELF file, just text\n".write(toFile: text, atomically: true, encoding: .utf8)
        let error = refusal(text)
        XCTAssertEqual(
            error, .notELF(path: text, reason: "it starts with the text \"not \" (6e 6f 74 20), not the ELF magic 7f 45 4c 46"))
        XCTAssertEqual(
            error?.description,
            "plugin \(text) is not an ELF shared object (it starts with the text \"not \" (6e 6f 74 20), not the ELF magic "
                + "7f 45 4c 46); build it with `cc -shared -fPIC` or as a SwiftPM .dynamic library")
        let empty = path("libEmpty.so")
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: nil))
        XCTAssertEqual(refusal(empty), .notELF(path: empty, reason: "it is 0 bytes long, too short to be ELF"))
        let archive = path("libStatic.so")
        try "!<arch>\n".write(toFile: archive, atomically: true, encoding: .utf8)
        XCTAssertEqual(refusal(archive), .notELF(path: archive, reason: "it is a static library (an ar archive), not a shared one"))
    }

    func testATruncatedELFIsMalformed() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: CPluginBuilder.buildCPeak(in: directory)))
        let truncated = path("libTruncated.so")
        try whole.prefix(100).write(to: URL(fileURLWithPath: truncated))
        let error = refusal(truncated)
        guard case .malformedELF(truncated, let reason) = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(reason.hasPrefix("the section header table ("), reason)
        XCTAssertTrue(reason.hasSuffix("runs past the end of the 100-byte file; it may have been cut short"), reason)
        XCTAssertTrue(error!.description.hasPrefix("plugin \(truncated) is not a well-formed ELF shared object ("), error!.description)
        XCTAssertFalse(isLoaded(truncated))
        // Cut inside the ELF header: before and after the machine field.
        for length in [10, 40] {
            let short = path("libShort\(length).so")
            try whole.prefix(length).write(to: URL(fileURLWithPath: short))
            guard case .malformedELF(short, let reason) = refusal(short) else { return XCTFail("\(length) bytes accepted") }
            XCTAssertTrue(reason.hasPrefix("the file is \(length) bytes"), reason)
        }
    }

    func testAnELFForAnotherMachineOrClassIsRefused() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        let hostText = try host.description
        XCTAssertEqual(hostText, ELFSymbolTable.host?.machine == 62 ? "64-bit little-endian x86-64" : "64-bit little-endian AArch64 (arm64)")
        let otherMachine: UInt16 = try host.machine == 62 ? 183 : 62
        let foreign = path("libForeign.so")
        try FileManager.default.copyItem(atPath: library, toPath: foreign)
        try patch(foreign, at: 18, with: bytes(otherMachine))
        let foreignText = "64-bit little-endian " + ELFSymbolTable.Target.machineName(otherMachine)
        let error = refusal(foreign)
        XCTAssertEqual(error, .wrongArchitecture(path: foreign, found: foreignText, host: hostText))
        XCTAssertEqual(
            error?.description,
            "plugin \(foreign) is built for \(foreignText), but this jackhost runs as \(hostText); rebuild the plugin for this machine")
        let narrow = path("libNarrow.so")
        try FileManager.default.copyItem(atPath: library, toPath: narrow)
        try patch(narrow, at: 4, with: [1])  // ELFCLASS32
        guard case .wrongArchitecture(narrow, let found, hostText) = refusal(narrow) else { return XCTFail("class 32 accepted") }
        XCTAssertTrue(found.hasPrefix("32-bit little-endian"), found)
        let bigEndian = path("libBig.so")
        try FileManager.default.copyItem(atPath: library, toPath: bigEndian)
        try patch(bigEndian, at: 5, with: [2])  // ELFDATA2MSB; e_machine is then read big-endian
        guard case .wrongArchitecture(bigEndian, let found, hostText) = refusal(bigEndian) else { return XCTFail("big-endian accepted") }
        XCTAssertTrue(found.hasPrefix("64-bit big-endian"), found)
        for refused in [foreign, narrow, bigEndian] { XCTAssertFalse(isLoaded(refused)) }
    }

    func testAnObjectFileIsNotASharedObject() throws {
        let source = path("entry.c")
        try "const void *jackhost_plugin_descriptor(void) { return 0; }\n".write(toFile: source, atomically: true, encoding: .utf8)
        let object = path("entry.o")
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["cc", "-c", "-fPIC", source, "-o", object]
        try compiler.run()
        compiler.waitUntilExit()
        XCTAssertEqual(compiler.terminationStatus, 0)
        XCTAssertEqual(refusal(object), .notASharedObject(path: object, reason: "it is an ELF relocatable object, a .o file"))
    }

    // MARK: Hostile files

    func testOutOfBoundsAndOversizedTablesAreRefusedWithoutReadingThem() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        let dynsym = try dynsymHeaderOffset(library)
        let cases: [(name: String, offset: Int, bytes: [UInt8], reason: String)] = [
            ("Huge", dynsym + 32, bytes(UInt64(1) << 40), ".dynsym is 1099511627776 bytes, over the 67108864-byte limit of this check"),
            ("Beyond", dynsym + 24, bytes(UInt64.max - 8), ".dynsym ("),  // offset + size overflows
            ("NoSections", 40, bytes(UInt64(0)), "it has no section headers (stripped with sstrip?), so its dynamic symbols cannot be checked"),
            ("SectionsBeyond", 40, bytes(UInt64(1) << 62), "the section header table ("),
            ("EntrySize", 58, bytes(UInt16(32)), "its section headers are 32 bytes, not 64"),
            ("BadLink", dynsym + 40, bytes(UInt32(0xffff)), ".dynsym links to section 65535, which is not a string table"),
            ("NoDynsym", dynsym + 4, bytes(UInt32(1)), "it has no dynamic symbol table (.dynsym), so it exports nothing"),
            ("SymbolSize", dynsym + 56, bytes(UInt64(0)), ".dynsym entries are 0 bytes, not 24"),
        ]
        for entry in cases {
            let hostile = path("lib\(entry.name).so")
            try FileManager.default.copyItem(atPath: library, toPath: hostile)
            try patch(hostile, at: entry.offset, with: entry.bytes)
            guard case .malformedELF(hostile, let reason) = refusal(hostile) else {
                XCTFail("\(entry.name) accepted")
                continue
            }
            XCTAssertTrue(reason.hasPrefix(entry.reason), "\(entry.name): \(reason)")
            XCTAssertFalse(isLoaded(hostile), entry.name)
        }
    }

    /// Random bytes written over the header, the section header table and `.dynsym`'s header:
    /// every variant is read or refused, none crashes the reader or makes it allocate without bound.
    func testCorruptedFilesNeverCrashTheReader() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        let original = try Data(contentsOf: URL(fileURLWithPath: library))
        let dynsym = try dynsymHeaderOffset(library)
        let regions = [0..<64, dynsym..<dynsym + 64, (original.count - 1024)..<original.count]
        var generator = SplitMix64(seed: 14)
        let mutant = path("libMutant.so")
        var outcomes: [String: Int] = [:]
        for _ in 0..<400 {
            var data = original
            for _ in 0..<Int(generator.next() % 8 + 1) {
                let region = regions[Int(generator.next() % UInt64(regions.count))]
                data[region.lowerBound + Int(generator.next() % UInt64(region.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            if generator.next() % 4 == 0 { data = data.prefix(Int(generator.next() % UInt64(data.count))) }
            try data.write(to: URL(fileURLWithPath: mutant))
            do {
                _ = try ELFSymbolTable(path: mutant, host: host).symbol(named: "jackhost_plugin_descriptor")
                outcomes["read", default: 0] += 1
            } catch {
                outcomes["\(error)".prefix { $0 != "(" }.description, default: 0] += 1
            }
        }
        XCTAssertEqual(outcomes.values.reduce(0, +), 400, "\(outcomes)")
    }
}

/// A small deterministic generator, so a failing mutation can be replayed.
private struct SplitMix64 {
    /// The generator's whole state.
    var state: UInt64
    /// A generator whose sequence is fixed by `seed`.
    init(seed: UInt64) { state = seed }
    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
