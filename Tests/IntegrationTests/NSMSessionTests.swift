import Foundation
import Glibc
import JackHostSignals
import XCTest

/// jackhost as a New Session Manager client, against a strict NSM server of the tests' own
/// (`Tests/Peers/nsm_server.py`, python3-liblo) and a private dummy server: the session opens,
/// records into its folder, saves, and quits on SIGTERM with the take final; a copied session
/// opens with its settings; a vanished manager leaves the take recording; a malformed open is
/// refused with `/error` and status 5; a flood of unknown messages is counted. The server
/// checks every message jackhost sends against the API, and each test asserts it found none
/// out of place. Takes are read back by libsndfile and sox and checked against the sequence.
final class NSMSessionTests: XCTestCase {
    var work: URL!

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-nsm-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: work) }

    private func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    /// Settings that record the generator's two outputs from the session's load.
    private let recordingSettings = """
        jackhost-settings = 1
        record-on-load = yes
        connect = jhgen:out_1
        connect = jhgen:out_2

        """

    private func writeSettings(_ text: String, in folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try text.write(toFile: folder + "/jackhost.conf", atomically: true, encoding: .utf8)
    }

    private func takes(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/takes")) ?? []).sorted().map { folder + "/takes/" + $0 }
    }

    /// Checks a finished take: libsndfile and sox read the same frames, two channels of the
    /// sequence without a break, at least `seconds` long.
    private func checkTake(_ file: String, seconds: Double, _ context: String) throws {
        let read = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(file), "libsndfile opens \(file): \(context)")
        XCTAssertEqual(read.header.channels, 2)
        XCTAssertGreaterThan(Double(read.header.frames), seconds * 48000, context)
        let sox = try AudioFileCheck.readWithSox(file, channels: 2)
        XCTAssertEqual(sox[0].count, read.header.frames, "sox reads as many frames as libsndfile")
        let junctions = SequenceJunctions(read.channels, skippingLeadIn: true)
        XCTAssertEqual(junctions.junctions, [], "the take is the sequence without a break: \(context)")
        XCTAssertEqual(junctions.leadIn, 0, "the ports were connected before the take started")
    }

    /// Starts a session; waits until jackhost has answered the open (or failed).
    private func openSession(
        at folder: String, name: String, id: String, server: PrivateJACKServer, log: String, openTypes: String = "sss"
    ) throws -> NSMTestServer {
        let manager = try NSMTestServer(path: folder, displayName: name, clientID: id, jackServer: server.name, log: log, openTypes: openTypes)
        manager.waitFor { ["opened", "exit"].contains($0["event"] as? String ?? "") }
        return manager
    }

    func testASessionOpensRecordsOnLoadSavesAndQuitsOnSIGTERMWithTheTakeFinal() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let folder = path("Gig/jackhost.nTEST")
            try writeSettings(recordingSettings, in: folder)
            let manager = try openSession(at: folder, name: "Gig", id: "jackhost.nTEST", server: server, log: path("jackhost.log"))
            defer { manager.stop() }
            XCTAssertEqual(manager.events.first { $0["event"] as? String == "opened" }?["jack_client"] as? Bool, true, manager.clientLog)
            // Sent right after the open's reply, so it may reach the manager a moment after "opened".
            XCTAssertNotNil(manager.waitForMessage("/nsm/client/gui_is_hidden", timeout: 5), manager.clientLog)
            XCTAssertEqual(manager.messages("/nsm/client/gui_is_hidden").count, 1, "the optional GUI's first state")

            manager.command("loaded")
            XCTAssertNotNil(manager.waitFor { _ in manager.statusLines.contains { $0.hasPrefix("recording Gig-") } }, manager.clientLog)
            usleep(1_500_000)
            manager.command("save")
            XCTAssertNotNil(manager.waitForMessage("/reply", first: "/nsm/client/save"), manager.clientLog)
            XCTAssertEqual(try String(contentsOfFile: folder + "/jackhost.conf", encoding: .utf8), recordingSettings, "saved as read")
            XCTAssertEqual(
                try FileManager.default.contentsOfDirectory(atPath: folder).sorted(), ["jackhost.conf", "takes"], "no temporary file left")
            manager.command("term")
            XCTAssertNotNil(manager.waitFor(timeout: 20) { $0["event"] as? String == "exit" }, manager.clientLog)
            XCTAssertEqual(manager.clientExit, 0, manager.clientLog)

            let files = takes(in: folder)
            XCTAssertEqual(files.count, 1, "\(files)")
            XCTAssertTrue(files.first?.hasSuffix(".wav") == true && files.first?.contains("/takes/Gig-") == true, "\(files)")
            try checkTake(files.first ?? "", seconds: 1.5, manager.clientLog)
            XCTAssertTrue(manager.clientLog.contains("in 1 triggered take(s) to \(files.first ?? "?")"), manager.clientLog)
            let progress = manager.messages("/nsm/client/progress").compactMap { ($0["args"] as? [Any])?.first as? Double }
            XCTAssertEqual(progress, [0, 1], "progress while the take is finalised")
            XCTAssertTrue(manager.statusLines.contains("take finalised; exit status 0"), "\(manager.statusLines)")
            XCTAssertEqual(manager.violations, [], manager.clientLog)
        }
    }

    /// A new session gets the commented default settings; edited, copied elsewhere and opened
    /// there, it records with them into the copy's folder, and the original stays untouched.
    func testACopiedSessionOpensElsewhereWithTheSameSettings() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let original = path("A/jackhost.nAAAA")
            let first = try openSession(at: original, name: "A", id: "jackhost.nAAAA", server: server, log: path("a.log"))
            first.command("term")
            first.waitFor { $0["event"] as? String == "exit" }
            first.stop()
            XCTAssertEqual(first.clientExit, 0, first.clientLog)
            let made = try String(contentsOfFile: original + "/jackhost.conf", encoding: .utf8)
            XCTAssertTrue(made.hasPrefix("# jackhost's settings for this session."), made)
            XCTAssertTrue(made.contains("\njackhost-settings = 1\n") && made.contains("\nrecord-on-load = no\n"), made)
            XCTAssertEqual(takes(in: original), [], "no take without a start")
            XCTAssertEqual(first.violations, [], first.clientLog)

            let edited =
                made.replacingOccurrences(of: "record-on-load = no", with: "record-on-load = yes")
                + "format = flac\nconnect = jhgen:out_1\nconnect = jhgen:out_2\n"
            try edited.write(toFile: original + "/jackhost.conf", atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: path("B"), withIntermediateDirectories: true)
            let copy = path("B/jackhost.nBBBB")
            try FileManager.default.copyItem(atPath: original, toPath: copy)
            let second = try openSession(at: copy, name: "B", id: "jackhost.nBBBB", server: server, log: path("b.log"))
            defer { second.stop() }
            second.command("loaded")
            XCTAssertNotNil(second.waitFor { _ in second.statusLines.contains { $0.hasPrefix("recording B-") } }, second.clientLog)
            usleep(1_200_000)
            second.command("save")
            second.waitForMessage("/reply", first: "/nsm/client/save")
            second.command("term")
            second.waitFor(timeout: 20) { $0["event"] as? String == "exit" }
            XCTAssertEqual(second.clientExit, 0, second.clientLog)
            let files = takes(in: copy)
            XCTAssertEqual(files.count, 1, "\(files)")
            XCTAssertTrue(files.first?.hasSuffix(".flac") == true, "format = flac from the copied settings: \(files)")
            try checkTake(files.first ?? "", seconds: 1, second.clientLog)
            XCTAssertEqual(takes(in: original), [], "the original session's folder is untouched")
            XCTAssertEqual(try String(contentsOfFile: copy + "/jackhost.conf", encoding: .utf8), edited)
            XCTAssertEqual(second.violations, [], second.clientLog)
        }
    }

    /// The manager crashes mid-take: jackhost says so once, records on, and a later SIGTERM
    /// still finalises a whole take.
    func testTheManagerVanishingMidSessionLeavesTheTakeRecording() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let folder = path("V/jackhost.nVVVV")
            try writeSettings(recordingSettings, in: folder)
            let manager = try openSession(at: folder, name: "V", id: "jackhost.nVVVV", server: server, log: path("v.log"))
            defer { manager.stop() }
            manager.command("loaded")
            XCTAssertNotNil(manager.waitFor { _ in manager.statusLines.contains { $0.hasPrefix("recording V-") } }, manager.clientLog)
            let pid = manager.clientPID
            defer { kill(pid, SIGKILL) }
            manager.command("vanish")
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { !manager.process.isRunning })
            XCTAssertTrue(
                JACKFixture.waitUntil(timeout: 5) { manager.clientLog.contains("the session manager went away") }, manager.clientLog)
            usleep(1_000_000)
            XCTAssertTrue(Self.isRunning(pid), "jackhost records on without its manager: \(manager.clientLog)")
            XCTAssertEqual(manager.clientLog.components(separatedBy: "the session manager went away").count - 1, 1, "said once")
            kill(pid, SIGTERM)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 20) { !Self.isRunning(pid) }, manager.clientLog)
            XCTAssertTrue(manager.clientLog.contains("recorded "), manager.clientLog)
            let files = takes(in: folder)
            XCTAssertEqual(files.count, 1, "\(files)")
            try checkTake(files.first ?? "", seconds: 1, manager.clientLog)
        }
    }

    /// A malformed open, a folder that cannot be made and settings jackhost refuses each get
    /// an `/error` reply with the API's code, one line on stderr, status 5, and no JACK client.
    func testAMalformedOpenIsAnsweredWithAnErrorAndStatusFive() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            try Data("not a folder".utf8).write(to: work.appendingPathComponent("file"))
            try writeSettings("jackhost-settings = 1\nformat = nope\n", in: path("bad/jackhost.nCCCC"))
            let cases: [(folder: String, openTypes: String, code: Int, line: String)] = [
                (path("ok/jackhost.nAAAA"), "ss", -1, "/nsm/client/open needs three strings (path, display name, client id), not \"ss\""),
                (path("file/jackhost.nBBBB"), "sss", -10, "cannot create the session folder"),
                (path("bad/jackhost.nCCCC"), "sss", -9, "jackhost.conf: unknown container \"nope\""),
            ]
            for (index, item) in cases.enumerated() {
                let id = "jackhost.n\(index)"
                let manager = try openSession(
                    at: item.folder, name: "M", id: id, server: server, log: path("m\(index).log"), openTypes: item.openTypes)
                defer { manager.stop() }
                XCTAssertNotNil(manager.waitFor { $0["event"] as? String == "exit" }, manager.clientLog)
                XCTAssertEqual(manager.clientExit, 5, manager.clientLog)
                let error = manager.messages("/error").first
                let arguments = error?["args"] as? [Any] ?? []
                XCTAssertEqual(arguments.first as? String, "/nsm/client/open", "\(manager.events)")
                XCTAssertEqual(arguments.dropFirst().first as? Int, item.code, "\(arguments)")
                XCTAssertTrue((arguments.last as? String)?.contains(item.line) == true, "\(arguments)")
                let lines = manager.clientLog.split(separator: "\n")
                XCTAssertEqual(lines.count, 1, "one line: \(manager.clientLog)")
                XCTAssertTrue(lines.first?.contains(item.line) == true, manager.clientLog)
                XCTAssertEqual(manager.violations, [], manager.clientLog)
                XCTAssertEqual(manager.events.first { $0["event"] as? String == "opened" } == nil, true)
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: path("ok")), "a malformed open makes nothing")
            XCTAssertEqual(
                try String(contentsOfFile: path("bad/jackhost.nCCCC/jackhost.conf"), encoding: .utf8), "jackhost-settings = 1\nformat = nope\n")
        }
    }

    /// The session's takes on a 3 MiB disk: the warning about the time left reaches the
    /// manager as a most important message, and `min-free` ends the take with a valid file.
    func testADiskWarningReachesTheManager() throws {
        let mountPoint = path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try JACKFixture.run("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint])
        guard mount.status == 0 else {
            print("SKIPPED LOUDLY: cannot mount a 3 MiB tmpfs here (needs root): \(mount.stderr)")
            throw XCTSkip("cannot mount a tmpfs: \(mount.stderr)")
        }
        defer { _ = try? JACKFixture.run("umount", [mountPoint]) }
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let folder = path("D/jackhost.nDDDD")
            try writeSettings(recordingSettings + "takes = \(mountPoint)\nmin-free = 2M\n", in: folder)
            let manager = try openSession(at: folder, name: "D", id: "jackhost.nDDDD", server: server, log: path("d.log"))
            defer { manager.stop() }
            manager.command("loaded")
            XCTAssertNotNil(manager.waitFor(timeout: 20) { $0["event"] as? String == "exit" }, manager.clientLog)
            XCTAssertEqual(manager.clientExit, 1, "--min-free ended the take: \(manager.clientLog)")
            let warnings = manager.messages("/nsm/client/message").compactMap { $0["args"] as? [Any] }
                .filter { ($0.first as? Int) == 3 && ($0.last as? String)?.contains("minutes of recording space left") == true }
            let onStderr = manager.clientLog.components(separatedBy: "minutes of recording space left").count - 1
            XCTAssertGreaterThan(warnings.count, 0, "\(manager.statusLines)")
            XCTAssertEqual(warnings.count, onStderr, "every warning on stderr reaches the manager: \(manager.statusLines)")
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: mountPoint)) ?? []).filter { $0.hasPrefix("D-") }
            XCTAssertEqual(files.count, 1, "\(files)")
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(mountPoint + "/" + (files.first ?? "")), "the take is valid")
            XCTAssertGreaterThan(header.frames, 24_000)
            XCTAssertEqual(manager.violations, [], manager.clientLog)
        }
    }

    /// No JACK server where the session says: the open is answered with `/error` (the API's
    /// general code and jackhost's one line), and jackhost exits as `run` would without a server.
    func testNoServerIsAnErrorReplyToTheOpen() throws {
        let folder = path("N/jackhost.nNNNN")
        let manager = try NSMTestServer(
            path: folder, displayName: "N", clientID: "jackhost.nNNNN", jackServer: "jhtest-no-such-\(getpid())", log: path("n.log"))
        defer { manager.stop() }
        XCTAssertNotNil(manager.waitFor(timeout: 20) { $0["event"] as? String == "exit" }, manager.clientLog)
        XCTAssertEqual(manager.clientExit, 1, manager.clientLog)
        let arguments = manager.messages("/error").first?["args"] as? [Any] ?? []
        XCTAssertEqual(arguments.first as? String, "/nsm/client/open", "\(manager.events)")
        XCTAssertEqual(arguments.dropFirst().first as? Int, -1)
        let line = try XCTUnwrap(arguments.last as? String)
        XCTAssertTrue(manager.clientLog.contains(line), "the manager gets the line stderr gets: \(line)\n\(manager.clientLog)")
        XCTAssertEqual(manager.violations, [], manager.clientLog)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/jackhost.conf"), "the session's folder is made before JACK is tried")
    }

    /// Hundreds of messages jackhost does not read: counted, ignored, and a save right after
    /// them is still answered.
    func testAFloodOfUnknownMessagesIsCountedAndIgnored() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let folder = path("F/jackhost.nFFFF")
            let manager = try openSession(at: folder, name: "F", id: "jackhost.nFFFF", server: server, log: path("f.log"))
            defer { manager.stop() }
            manager.command("flood 2000")
            // The kernel drops what its receive buffer cannot hold; once jackhost has read the
            // rest (64 a tick), the manager's save is read and answered.
            usleep(1_000_000)
            manager.command("save")
            XCTAssertNotNil(manager.waitForMessage("/reply", first: "/nsm/client/save", timeout: 10), manager.clientLog)
            manager.command("term")
            manager.waitFor(timeout: 20) { $0["event"] as? String == "exit" }
            XCTAssertEqual(manager.clientExit, 0, manager.clientLog)
            let line = manager.clientLog.split(separator: "\n").first { $0.contains("message(s) jackhost does not read were ignored") }
            let count = Int(line?.split(separator: " ").first { Int($0) != nil } ?? "") ?? 0
            XCTAssertGreaterThan(count, 100, manager.clientLog)
            XCTAssertLessThanOrEqual(count, 2000, "only what reached it (the kernel may drop a flood)")
            XCTAssertEqual(manager.violations, [], manager.clientLog)
        }
    }

    /// Without a manager nothing changes: a command ignores NSM_URL, no arguments and no
    /// NSM_URL is the usual usage line, and a bad or silent NSM_URL is one line and a status.
    func testWithoutASessionManagerNothingChanges() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let info = try JACKFixture.run(JackhostBinary.path, ["info", "-s", server.name], environment: ["NSM_URL": "osc.udp://127.0.0.1:9/"])
            XCTAssertEqual(info.status, 0, info.stderr)
            XCTAssertTrue(info.stdout.contains("inputNumberOfChannels") || info.stdout.contains("capture"), info.stdout)
            let bare = try JACKFixture.run(JackhostBinary.path, [], removingEnvironment: ["NSM_URL"])
            XCTAssertEqual(bare.status, 2)
            XCTAssertTrue(bare.stderr.contains("no command given"), bare.stderr)
            let bad = try JACKFixture.run(JackhostBinary.path, [], environment: ["NSM_URL": "http://example/"])
            XCTAssertEqual(bad.status, 2)
            XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)
            XCTAssertTrue(bad.stderr.contains("is not an osc.udp:// address"), bad.stderr)
            // A port nobody listens on: refused at once (or unanswered), status 5, one line.
            let silent = try JACKFixture.run(JackhostBinary.path, [], timeout: 20, environment: ["NSM_URL": "osc.udp://127.0.0.1:9/"])
            XCTAssertEqual(silent.status, 5, silent.stderr)
            XCTAssertEqual(silent.stderr.split(separator: "\n").count, 1, silent.stderr)
            XCTAssertTrue(silent.stderr.contains("NSM_URL"), silent.stderr)
        }
    }

    /// SIGTERM at once, while jackhost waits for the manager's answer: it ends at once, with
    /// nothing made.
    func testASignalDuringTheHandshakeEndsItAtOnce() throws {
        // A manager that never answers: a socket of the test's own.
        let listener = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(listener, $0, length)
                _ = getsockname(listener, $0, &length)
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        let started = Date()
        let child = try RunningJackhost(arguments: [], directory: work, environment: ["NSM_URL": "osc.udp://127.0.0.1:\(port)/"])
        var byte = [UInt8](repeating: 0, count: 2048)
        var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&poller, 1, 10_000), 1, "the announce arrived")
        XCTAssertGreaterThan(recv(listener, &byte, byte.count, 0), 20)
        child.signal(SIGTERM)
        XCTAssertEqual(child.wait(timeout: 5), 0, child.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "well before the 10 s answer timeout")
    }

    private static func isRunning(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        // An orphan that exited may stay a zombie until its new parent reaps it.
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return !(stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).hasPrefix("Z") ?? true)
    }
}
