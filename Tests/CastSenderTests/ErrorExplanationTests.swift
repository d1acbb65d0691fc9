import CastModel
import CastSender
import JSONSupport
import TestSupport
import Testing

/// Which check a failure should send the user to.
enum ExpectedCheck: Sendable, CustomTestStringConvertible {
    case check, probe, checkThenProbe, textTrack, image, other(String), status, none

    var testDescription: String {
        switch self {
        case .check: "check"
        case .probe: "probe"
        case .checkThenProbe: "check+probe"
        case .textTrack: "check track"
        case .image: "check image"
        case .other(let placeholder): "check \(placeholder)"
        case .status: "status"
        case .none: "nothing"
        }
    }

    /// The command for the fixture LOAD (HLS film, English captions active, one poster).
    var command: String? {
        let url = Fixture.mediaURL
        return switch self {
        case .check: "castprep check \(url)"
        case .probe: "castprep probe \(url)"
        case .checkThenProbe: "castprep check \(url), then castprep probe \(url)"
        case .textTrack: "castprep check https://media.example.com/films/sintel.en.vtt"
        case .image: "castprep check https://media.example.com/films/sintel.jpg"
        case .other(let placeholder): "castprep check \(placeholder)"
        case .status: "castprep status"
        case .none: nil
        }
    }
}

@Suite("Device errors explained")
struct ErrorExplanationTests {
    /// The Web Receiver's DetailedErrorCode table (protocol reference §2.4) and the check each
    /// code calls for: network and CORS codes → check, decode and manifest codes → probe.
    static let detailedErrorCodes: [(Int, String, ExpectedCheck)] = [
        (100, "MEDIA_UNKNOWN", .probe), (101, "MEDIA_ABORTED", .check), (102, "MEDIA_DECODE", .probe),
        (103, "MEDIA_NETWORK", .check), (104, "MEDIA_SRC_NOT_SUPPORTED", .checkThenProbe),
        (110, "SOURCE_BUFFER_FAILURE", .probe),
        (200, "MEDIAKEYS_UNKNOWN", .other("LICENSE_URL")), (201, "MEDIAKEYS_NETWORK", .other("LICENSE_URL")),
        (202, "MEDIAKEYS_UNSUPPORTED", .none), (203, "MEDIAKEYS_WEBCRYPTO", .probe),
        (300, "NETWORK_UNKNOWN", .check), (301, "SEGMENT_NETWORK", .check),
        (311, "HLS_NETWORK_MASTER_PLAYLIST", .check),
        (312, "HLS_NETWORK_PLAYLIST", .check), (313, "HLS_NETWORK_NO_KEY_RESPONSE", .other("KEY_URL")),
        (314, "HLS_NETWORK_KEY_LOAD", .other("KEY_URL")), (315, "HLS_NETWORK_INVALID_SEGMENT", .checkThenProbe),
        (316, "HLS_SEGMENT_PARSING", .probe), (321, "DASH_NETWORK", .check), (322, "DASH_NO_INIT", .check),
        (331, "SMOOTH_NETWORK", .check), (332, "SMOOTH_NO_MEDIA_DATA", .check), (400, "MANIFEST_UNKNOWN", .probe),
        (411, "HLS_MANIFEST_MASTER", .probe), (412, "HLS_MANIFEST_PLAYLIST", .probe),
        (420, "DASH_MANIFEST_UNKNOWN", .probe),
        (421, "DASH_MANIFEST_NO_PERIODS", .probe), (422, "DASH_MANIFEST_NO_MIMETYPE", .probe),
        (423, "DASH_INVALID_SEGMENT_INFO", .probe), (431, "SMOOTH_MANIFEST", .probe),
        (500, "SEGMENT_UNKNOWN", .checkThenProbe),
        (600, "TEXT_UNKNOWN", .textTrack), (900, "APP", .none),
        (901, "BREAK_CLIP_LOADING_ERROR", .other("BREAK_CLIP_URL")),
        (902, "BREAK_SEEK_INTERCEPTOR_ERROR", .none), (903, "IMAGE_ERROR", .image), (904, "LOAD_INTERRUPTED", .status),
        (905, "LOAD_FAILED", .checkThenProbe), (906, "MEDIA_ERROR_MESSAGE", .probe), (999, "GENERIC", .checkThenProbe),
    ]

    @Test("the table covers every detailedErrorCode of the reference")
    func tableIsComplete() {
        #expect(CastErrorExplanation.knownDetailedErrorCodes == Self.detailedErrorCodes.map(\.0))
    }

    @Test(
        "LOAD_FAILED with each detailedErrorCode is thrown explained, with the check to run",
        arguments: detailedErrorCodes)
    func loadFailed(code: Int, name: String, expected: ExpectedCheck) async throws {
        let (device, sender) = try await launchedSender()
        let events = await sender.events()
        await device.setRule { request in
            guard request.type == "LOAD", let id = request.requestID else { return .standard }
            // The shape of a real device's answer (LOG SamDel#152), then the IDLE/ERROR status.
            return .reply([
                ["requestId": JSONValue(id), "type": "LOAD_FAILED", "detailedErrorCode": JSONValue(code), "itemId": 1],
                [
                    "type": "MEDIA_STATUS", "requestId": 0,
                    "status": [["mediaSessionId": 1, "playerState": "IDLE", "idleReason": "ERROR"]],
                ],
            ])
        }
        let error = try #require(await senderError { _ = try await sender.load(Fixture.load) })
        #expect(error.code == "device.load-failed")
        let explanation = try #require(error.explanation)
        #expect(explanation.detailedErrorCode == code)
        #expect(explanation.detailedErrorName == name)
        #expect(explanation.itemID == 1)
        #expect(explanation.command == expected.command)
        #expect(error.fix == expected.command.map { "run \($0)" })
        #expect(!explanation.likelyCause.isEmpty)
        #expect(explanation.description.hasPrefix("LOAD_FAILED \(code) \(name) (item 1): "))
        // Listeners hear about it too.
        await sender.close()
        var reported: [Int?] = []
        for await event in events { if case .deviceError(let e) = event { reported.append(e.detailedErrorCode) } }
        #expect(reported == [code])
    }

    @Test(
        "INVALID_REQUEST reasons point at validate, status or nothing",
        arguments: [
            ("INVALID_PARAMS", "castprep validate REQUEST.json"),
            ("INVALID_COMMAND", "castprep validate REQUEST.json"),
            ("INVALID_MEDIA_SESSION_ID", "castprep status"),
            ("VIDEO_DEVICE_REQUIRED", "castprep devices"),
            ("PREMIUM_ACCOUNT_REQUIRED", nil),
        ] as [(String, String?)])
    func invalidRequest(reason: String, command: String?) async throws {
        let (device, sender) = try await launchedSender()
        await device.setRule { request in
            guard request.type == "LOAD", let id = request.requestID else { return .standard }
            return .reply([["type": "INVALID_REQUEST", "requestId": JSONValue(id), "reason": .string(reason)]])
        }
        let error = try #require(await senderError { _ = try await sender.load(Fixture.load) })
        #expect(error.code == "device.invalid-request")
        #expect(error.explanation?.reason == reason)
        #expect(error.explanation?.command == command)
    }

    @Test("an unrequested LOAD_FAILED for a later queue item reaches listeners with the loaded media's URLs")
    func unsolicitedFailure() async throws {
        let (device, sender) = try await launchedSender()
        let events = await sender.events()
        try await sender.load(Fixture.load)
        await device.broadcast(try .parse(#"{"type":"LOAD_FAILED","requestId":0,"detailedErrorCode":311,"itemId":2}"#))
        try await sender.receiverStatus()
        await sender.close()
        var explanations: [CastErrorExplanation] = []
        for await event in events { if case .deviceError(let e) = event { explanations.append(e) } }
        #expect(explanations.count == 1)
        #expect(explanations.first?.command == "castprep check \(Fixture.mediaURL)")
        #expect(explanations.first?.itemID == 2)
    }

    @Test(
        "codes outside the table are explained by their hundred",
        arguments: [
            (107, "castprep probe URL"), (250, "castprep check LICENSE_URL"), (399, "castprep check URL"),
            (480, "castprep probe URL"), (555, "castprep check URL, then castprep probe URL"),
            (650, "castprep check TRACK_URL"),
            (777, "castprep check URL, then castprep probe URL"),
        ])
    func family(code: Int, command: String) {
        let explanation = CastErrorExplanation(errorType: "LOAD_FAILED", detailedErrorCode: code)
        #expect(explanation.command == command)
        #expect(explanation.detailedErrorName == nil)
    }

    @Test("the explanation as a Diagnostic")
    func diagnostic() {
        let explanation = CastErrorExplanation(
            errorType: "LOAD_FAILED", detailedErrorCode: 600, context: .init(media: Fixture.media, activeTrackIDs: [3]))
        let diagnostic = explanation.diagnostic
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.code == "device.load-failed")
        #expect(diagnostic.fix == "run castprep check https://media.example.com/films/sintel.fr.vtt")
        #expect(
            diagnostic.message.hasPrefix("LOAD_FAILED 600 TEXT_UNKNOWN: A text track failed to load. Likely cause: "))
    }

    @Test("every explanation, rendered (golden file)")
    func table() {
        let context = CastErrorExplanation.Context(
            mediaURL: "https://cdn.example/master.m3u8", textTrackURL: "https://cdn.example/en.vtt",
            imageURL: "https://cdn.example/poster.jpg")
        var blocks: [String] = []
        for code in CastErrorExplanation.knownDetailedErrorCodes {
            blocks.append(
                CastErrorExplanation(errorType: "LOAD_FAILED", detailedErrorCode: code, context: context).description)
        }
        blocks.append(CastErrorExplanation(errorType: "LOAD_FAILED", context: context).description)
        blocks.append(CastErrorExplanation(errorType: "LOAD_CANCELLED", context: context).description)
        blocks.append(CastErrorExplanation(errorType: "INVALID_PLAYER_STATE", context: context).description)
        for reason in CastErrorExplanation.knownInvalidRequestReasons {
            blocks.append(
                CastErrorExplanation(errorType: "INVALID_REQUEST", reason: reason, context: context).description)
        }
        for reason in CastErrorExplanation.knownLaunchErrorReasons {
            blocks.append(CastErrorExplanation(errorType: "LAUNCH_ERROR", reason: reason, context: context).description)
        }
        Snapshot.assertMatches(blocks.joined(separator: "\n\n") + "\n", named: "error-explanations.txt")
    }
}
