import Testing

@testable import CastModel
@testable import JSONSupport

@Suite("Control requests and the namespace decoders")
struct ControlRequestTests {
    @Test(
        "each media request decodes to its case and comes back byte for byte",
        arguments: [
            (#"{"mediaSessionId":1,"requestId":2,"type":"GET_STATUS"}"#, "GET_STATUS"),
            (#"{"customData":{"a":1},"mediaSessionId":1,"requestId":2,"type":"PLAY"}"#, "PLAY"),
            (#"{"mediaSessionId":1,"requestId":2,"type":"PAUSE"}"#, "PAUSE"),
            (#"{"mediaSessionId":1,"requestId":2,"type":"STOP"}"#, "STOP"),
            (
                #"{"currentTime":42.5,"mediaSessionId":1,"requestId":2,"resumeState":"PLAYBACK_PAUSE","type":"SEEK"}"#,
                "SEEK"
            ),
            (#"{"mediaSessionId":1,"playbackRate":1.5,"requestId":2,"type":"SET_PLAYBACK_RATE"}"#, "SET_PLAYBACK_RATE"),
            (#"{"mediaSessionId":1,"requestId":2,"type":"SET_VOLUME","volume":{"level":0.5}}"#, "SET_VOLUME"),
            (#"{"jump":1,"mediaSessionId":1,"requestId":2,"type":"QUEUE_UPDATE"}"#, "QUEUE_UPDATE"),
            (#"{"mediaSessionId":1,"requestId":2,"type":"QUEUE_NEXT"}"#, "QUEUE_NEXT"),
            (#"{"mediaSessionId":1,"requestId":2,"type":"QUEUE_PREV"}"#, "QUEUE_PREV"),
            (#"{"mediaSessionId":1,"requestId":2,"type":"QUEUE_GET_ITEM_IDS"}"#, "QUEUE_GET_ITEM_IDS"),
            (#"{"itemIds":[3,4],"mediaSessionId":1,"requestId":2,"type":"QUEUE_GET_ITEMS"}"#, "QUEUE_GET_ITEMS"),
            // A member CastPrep does not model is kept.
            (#"{"mediaSessionId":1,"requestId":2,"sessionId":"abc","type":"PLAY","x-vendor":true}"#, "PLAY"),
        ])
    func mediaRoundTrip(text: String, type: String) throws {
        let json = try parseJSON(text)
        var diagnostics: [Diagnostic] = []
        let request = try #require(MediaRequest.decode(from: json, diagnostics: &diagnostics))
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(request.request != nil)
        #expect(request.messageType == type)
        #expect(request.mediaSessionID == 1)
        #expect(request.needsMediaSession == (type != "GET_STATUS"))
        #expect(JSONWriter.compact.string(from: request.jsonValue) == text)
    }

    @Test(
        "each receiver request decodes to its case and comes back byte for byte",
        arguments: [
            (#"{"requestId":1,"type":"GET_STATUS"}"#, "GET_STATUS"),
            (#"{"requestId":1,"sessionId":"s-1","type":"STOP"}"#, "STOP"),
            (#"{"requestId":1,"type":"SET_VOLUME","volume":{"muted":false}}"#, "SET_VOLUME"),
            (#"{"appId":["CC1AD845"],"requestId":1,"type":"GET_APP_AVAILABILITY"}"#, "GET_APP_AVAILABILITY"),
            (#"{"appId":"CC1AD845","requestId":1,"type":"LAUNCH"}"#, "LAUNCH"),
        ])
    func receiverRoundTrip(text: String, type: String) throws {
        let json = try parseJSON(text)
        var diagnostics: [Diagnostic] = []
        let request = try #require(ReceiverRequest.decode(from: json, diagnostics: &diagnostics))
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(request.messageType == type)
        #expect(JSONWriter.compact.string(from: request.jsonValue) == text)
    }

    @Test("a type the namespace does not have is kept verbatim; a non-object does not decode")
    func others() throws {
        var diagnostics: [Diagnostic] = []
        let unknown = try #require(
            MediaRequest.decode(from: ["type": "PRECACHE", "requestId": 1], diagnostics: &diagnostics))
        #expect(unknown == .other(type: "PRECACHE", ["type": "PRECACHE", "requestId": 1]))
        #expect(unknown.request == nil)
        #expect(!unknown.needsMediaSession)
        let untyped = try #require(ReceiverRequest.decode(from: ["requestId": 1], diagnostics: &diagnostics))
        #expect(untyped.messageType == nil)
        #expect(MediaRequest.decode(from: [1, 2], diagnostics: &diagnostics) == nil)
        #expect(diagnostics.isEmpty)
    }

    @Test("mistyped members are reported with their path and leave the field empty")
    func mistyped() throws {
        var diagnostics: [Diagnostic] = []
        let json = try parseJSON(#"{"type":"SEEK","requestId":1,"relativeTime":"10","currentTime":5}"#)
        guard case .seek(let seek)? = MediaRequest.decode(from: json, diagnostics: &diagnostics) else {
            Issue.record("not a SEEK")
            return
        }
        #expect(seek.relativeTime == nil)
        #expect(seek.currentTime == 5)
        #expect(diagnostics.map(\.code.rawValue) == ["json.type-mismatch"])
        #expect(diagnostics.first?.path?.description == "$.relativeTime")
    }

    @Test("GET_APP_AVAILABILITY takes a single id written as a string")
    func singleAppID() throws {
        let request = try AppAvailabilityRequest(
            jsonText: #"{"type":"GET_APP_AVAILABILITY","requestId":1,"appId":"CC1AD845"}"#)
        #expect(request.appIDs == ["CC1AD845"])
    }

    @Test(
        "castprep validate applies the control rules and tells the namespaces apart",
        arguments: [
            (#"{"type":"SEEK","requestId":1}"#, ["seek.position-missing"]),
            (#"{"type":"SEEK","requestId":1,"currentTime":-3}"#, ["seek.position-negative"]),
            (#"{"type":"SEEK","requestId":1,"currentTime":3,"resumeState":"PLAY"}"#, ["value.unknown"]),
            (#"{"type":"SET_PLAYBACK_RATE","requestId":1,"mediaSessionId":1}"#, ["rate.missing"]),
            (#"{"type":"SET_VOLUME","requestId":1,"volume":{"level":3}}"#, ["volume.level-range"]),
            (#"{"type":"SET_VOLUME","requestId":1,"mediaSessionId":1,"volume":{}}"#, ["volume.empty"]),
            (#"{"type":"QUEUE_REMOVE","requestId":1,"itemIds":[2,2]}"#, ["queue.item-id-duplicate"]),
            (
                #"{"type":"QUEUE_REORDER","requestId":1,"itemIds":[2],"insertBefore":2}"#,
                ["queue.reorder-before-itself"]
            ),
            (#"{"type":"QUEUE_UPDATE","requestId":1,"jump":0}"#, ["queue.jump-zero"]),
            (#"{"type":"STOP","requestId":1,"sessionId":"s"}"#, []),
            (#"{"type":"PLAY","requestId":1,"mediaSessionId":1}"#, []),
        ])
    func validation(text: String, codes: [String]) throws {
        #expect(try findings(text).map(\.code.rawValue) == codes)
    }

    @Test("a control request too large for one frame is an error")
    func frameSize() throws {
        let padding = JSONValue.string(String(repeating: "x", count: CastFrame.maximumBodySize))
        let seek = SeekRequest(requestID: 1, currentTime: 1, customData: ["padding": padding])
        #expect(CastValidator().validate(MediaRequest.seek(seek)).map(\.code.rawValue) == ["message.frame-too-large"])
    }
}
