import CastChannel
import CastDevices
import CastDiscovery
import CastModel
import CastReceiver
import CastReceiverRuntime
import CastSender
import Captions
import Casting
import Catalog
import CodedErrors
import CommandParsing
import Foundation
import Glibc
import HTTPCheck
import JSONSupport
import MediaProbe
import MediaServer
import Preflight
import StreamingFormats
import SystemIO
import Testing

/// One error of every module's error type, made the way the module makes it where a public
/// entry point can (a parser fed bad input), else with its public initializer.
enum ErrorSamples {
    static func all() -> [any CodedError] {
        var samples: [any CodedError] = [
            ChannelError(
                ChannelError.Code.frameTooLarge, "a frame declares 70000 bytes; the limit is 65536",
                fix: "send smaller messages"),
            SystemCallError("pipe", errno: EMFILE),
            DNSCodecError(.truncated, at: 12, "the name ends past the packet"),
            CastDiscoveryError(
                Diagnostic(.error, .discoveryNoInterface, "no interface is up", fix: "bring up a network interface")),
            PreflightError(
                code: "preflight.output-not-writable", message: "cannot write /x",
                fix: "choose another folder with -o DIR"),
            CastingError("cast.no-route", "no local address routes to 10.0.0.9", fix: "check the network"),
            HTTPLibraryError("libcurl (libcurl.so.4) could not be loaded"),
            UsageError(message: "Unknown option '--bogus'", commandPath: ["castprep", "load"]),
            ReceiverEmulatorError(code: "receiver.bind-failed", message: "port 8009 is taken", fix: "use --port 0"),
            ProbeError("probe.not-media", "no audio or video stream", fix: "give a media file", source: "notes.txt"),
            CastDeviceLocatorError(
                Diagnostic(.error, .devicesUnknownName, "no device is called Kitchen", fix: "run castprep devices")),
            CastSenderError(
                code: CastSenderError.Code.timeout, message: "no reply to GET_STATUS in 5 s", fix: "check the device"),
            MediaServerError("serve.address-invalid", "'x' is not an address", fix: "write 192.168.1.20"),
            CaptionError(
                "captions.input-too-large", "the file is 300 MiB; the limit is 256 MiB", fix: "split the file"),
            TransferFailure(.dns, "Could not resolve host: nowhere.invalid"),
            ArithmeticOverflow("segment number 9223372036854775807 + 1 is past 64 bits"),
        ]
        if case .failure(let error) = MediaType.parse("video") { samples.append(error) }
        do { _ = try QueuePlanner().plan(items: []) } catch { samples.append(error) }
        do { _ = try JSONParser().parse("{\"a\": ") } catch { samples.append(error) }
        do { _ = try MPDDocument(Array("<html/>".utf8)) } catch { samples.append(error) }
        do { _ = try ReceiverFaults(jsonText: "{\"stopPong\": true}") } catch { samples.append(error) }
        do { _ = try MediaInformation(jsonText: "[]") } catch {
            if let coded = error as? any CodedError { samples.append(coded) }
        }
        do { _ = try CatalogReader().read(contentsOf: "/") } catch {
            if let coded = error as? any CodedError { samples.append(coded) }
        }
        return samples
    }
}

@Suite("Coded errors render one way")
struct ErrorRenderingTests {
    @Test("every module's errors are made the way the tests expect")
    func everyTypeIsSampled() {
        let types = Set(ErrorSamples.all().map { String(describing: type(of: $0)) })
        // Every public error type of the modules (IOSAppCheck's PlistError is internal and
        // rendered as a finding there).
        #expect(types.count == 23, "\(types.sorted())")
    }

    @Test("text: error, [code], the message and one fix line", arguments: ErrorSamples.all().map(Sample.init))
    func text(sample: Sample) {
        let error = sample.error
        let text = ErrorRenderer.text(error)
        let code = error.code.rawValue
        #expect(code.contains(".") && !code.contains(" "), "\(code)")
        #expect(!error.message.isEmpty)
        #expect(text.contains("error: [\(code)] \(error.message)"), "\(text)")
        #expect(text.components(separatedBy: "\n    fix: ").count == (error.fix == nil ? 1 : 2), "\(text)")
        if let fix = error.fix { #expect(text.hasSuffix("fix: \(fix)")) }
        #expect(!text.contains("colored"))
    }

    @Test(
        "description quotes the message and the code once, without the fix",
        arguments: ErrorSamples.all().map(Sample.init))
    func description(sample: Sample) {
        let error = sample.error
        if error is UsageError {
            // Usage errors keep argument-parser's layout; their description is the message.
            #expect(error.description == error.message)
            return
        }
        if let system = error as? SystemCallError {
            // Always a cause inside another module's error, which quotes it as `call: reason`.
            #expect(system.description == "\(system.call): \(system.reason)")
            return
        }
        #expect(error.description.hasSuffix("\(error.message) [\(error.code.rawValue)]"), "\(error.description)")
        #expect(!error.description.contains("fix:"))
    }

    @Test("JSON: the members of an error diagnostic", arguments: ErrorSamples.all().map(Sample.init))
    func json(sample: Sample) throws {
        let error = sample.error
        let value = JSONValue(codedError: error)
        let members = try #require(value.objectValue)
        #expect(members["severity"] == "error")
        #expect(members["code"] == .string(error.code.rawValue))
        #expect(members["message"] == .string(error.message))
        #expect(members["fix"] == error.fix.map(JSONValue.string))
        #expect(Set(members.keys).isSubset(of: ["severity", "code", "message", "fix", "location"]))
    }

    @Test("a located error prints file:line:column first, in text and JSON")
    func location() throws {
        let error = ProbeError(
            "probe.not-media", "no audio or video stream", fix: "give a media file", source: "notes.txt")
        #expect(
            ErrorRenderer.text(error)
                == "notes.txt: error: [probe.not-media] no audio or video stream\n    fix: give a media file")
        #expect(
            JSONValue(codedError: error)
                == [
                    "severity": "error", "code": "probe.not-media", "message": "no audio or video stream",
                    "fix": "give a media file",
                    "location": ["file": "notes.txt"],
                ])
        let syntax = try #require(ErrorSamples.all().first { $0 is JSONSyntaxError })
        #expect(
            ErrorRenderer.text(syntax).hasPrefix("line 1:7: error: [json.unexpected-end] "),
            "\(ErrorRenderer.text(syntax))")
    }

    @Test("colour marks only the word error")
    func colored() {
        let error = MediaServerError("serve.address-invalid", "'x' is not an address", fix: "write 192.168.1.20")
        #expect(
            ErrorRenderer.text(error, colored: true)
                == "\u{1B}[1;31merror\u{1B}[0m: [serve.address-invalid] 'x' is not an address\n    fix: write 192.168.1.20"
        )
    }
}

@Suite("Nested errors say one message and one fix")
struct NestedErrorTests {
    @Test("the cause's message and code are said once, and the outer fix is the only fix")
    func faultsSyntax() throws {
        let error = try #require(throws: ReceiverFaultsError.self) { try ReceiverFaults(jsonText: "{\"stopPongs\": ") }
        let text = ErrorRenderer.text(error)
        #expect(text.hasPrefix("error: [faults.syntax] the faults file is not valid JSON: "), "\(text)")
        #expect(text.components(separatedBy: "[json.unexpected-end]").count == 2, "\(text)")
        #expect(text.components(separatedBy: "fix:").count == 2, "\(text)")
        #expect(text.hasSuffix("\n    fix: check it with castprep validate or a JSON linter"))
        let json = try #require(JSONValue(codedError: error).objectValue)
        #expect(json["causes"] == ["json.unexpected-end"])
        #expect(json["fix"] == "check it with castprep validate or a JSON linter")
        // The cause's place comes with its message, not before the outer error.
        #expect(text.contains("not valid JSON: line 1:"), "\(text)")
        #expect(json["location"] == nil)
    }

    @Test("without a fix of its own, a wrapper gives its cause's fix")
    func causeFix() {
        let channel = ChannelError(
            ChannelError.Code.connectFailed, "cannot connect to 127.0.0.1:9 (Connection refused)",
            fix: "check that the device is on and on this network")
        let error = CastSenderError(
            code: CastSenderError.Code.sendFailed, message: "cannot open a link to 127.0.0.1:9", causedBy: channel)
        #expect(
            ErrorRenderer.text(error) == """
                error: [sender.send-failed] cannot open a link to 127.0.0.1:9: cannot connect to 127.0.0.1:9 (Connection refused) \
                [channel.connect-failed]
                    fix: check that the device is on and on this network
                """)
        #expect(error.summary.components(separatedBy: "fix:").count == 2, "\(error.summary)")
    }

    @Test("a cause of another kind is quoted by its text")
    func uncodedCause() {
        struct Plain: Error, CustomStringConvertible { var description: String { "broken pipe" } }
        let error = CastSenderError(
            code: CastSenderError.Code.sendFailed, message: "could not send LOAD", causedBy: Plain())
        #expect(error.message == "could not send LOAD: broken pipe")
        #expect(error.cause == nil)
    }

    @Test("a cause with the same code and a message already quoted adds nothing")
    func sameCode() {
        let inner = Wrapper(
            code: "devices.config-unreadable", message: "devices.json is not JSON", fix: nil, cause: nil)
        let outer = Wrapper(
            code: "devices.config-unreadable", message: "cannot read devices.json is not JSON", fix: "fix the file",
            cause: inner)
        #expect(
            ErrorRenderer.text(outer)
                == "error: [devices.config-unreadable] cannot read devices.json is not JSON\n    fix: fix the file")
        #expect(ErrorRenderer.render(outer).causeCodes.isEmpty)
    }

    @Test("a cause chain is followed at most ErrorRenderer.maximumCauseDepth deep")
    func deepChain() {
        var error = Wrapper(code: "test.level-0", message: "level 0", fix: nil, cause: nil)
        for level in 1...20 {
            error = Wrapper(
                code: DiagnosticCode("test.level-\(level)"), message: "level \(level)", fix: nil, cause: error)
        }
        #expect(ErrorRenderer.render(error).causeCodes.count == ErrorRenderer.maximumCauseDepth)
    }
}

/// An error with every member settable, for the renderer's rules.
struct Wrapper: CodedError {
    var code: DiagnosticCode
    var message: String
    var fix: String?
    var cause: (any CodedError)?
}

/// An error as a test argument, named by its code in the test report.
struct Sample: Sendable, CustomTestStringConvertible {
    let error: any CodedError
    var testDescription: String { "\(type(of: error)) \(error.code.rawValue)" }
}
