import Testing

@testable import CastModel
@testable import JSONSupport

@Suite("QUEUE_UPDATE, QUEUE_REMOVE and QUEUE_REORDER")
struct QueueEditRequestTests {
    @Test(
        "each request decodes its members and comes back byte for byte",
        arguments: [
            // pychromecast's queue_next: QUEUE_UPDATE with a jump and the app sessionId.
            #"{"jump":1,"mediaSessionId":3,"requestId":17,"sessionId":"f4327fa9-ae8b-4f1a-8ba6-a1cd0fd7f3d7","type":"QUEUE_UPDATE"}"#,
            #"{"currentItemId":4,"currentTime":12.5,"items":[{"autoplay":false,"itemId":2}],"repeatMode":"REPEAT_ALL","requestId":2,"shuffle":true,"type":"QUEUE_UPDATE"}"#,
            #"{"currentItemId":3,"itemIds":[1,2],"requestId":5,"type":"QUEUE_REMOVE"}"#,
            #"{"currentTime":0,"insertBefore":1,"itemIds":[5,4],"mediaSessionId":1,"requestId":6,"type":"QUEUE_REORDER"}"#,
        ])
    func roundTrip(text: String) throws {
        let json = try parseJSON(text)
        var diagnostics: [Diagnostic] = []
        let output: JSONValue?
        switch json["type"]?.stringValue {
        case "QUEUE_UPDATE":
            output = QueueUpdateRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
        case "QUEUE_REMOVE":
            output = QueueRemoveRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
        default: output = QueueReorderRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
        }
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(output.map(JSONWriter.compact.string(from:)) == text)
    }

    @Test("decoded values land in their fields")
    func fields() throws {
        let update = try QueueUpdateRequest(
            jsonText:
                #"{"type":"QUEUE_UPDATE","requestId":2,"jump":-1,"repeatMode":"REPEAT_SINGLE","items":[{"itemId":2,"preloadTime":20}]}"#
        )
        #expect(update.jump == -1)
        #expect(update.repeatMode == .single)
        #expect(update.items?.first?.preloadTime == 20)
        let remove = try QueueRemoveRequest(jsonText: #"{"type":"QUEUE_REMOVE","requestId":3,"itemIds":[7.0,8]}"#)
        #expect(remove.itemIDs == [7, 8])
        let reorder = QueueReorderRequest(requestID: 4, itemIDs: [3], insertBefore: 1)
        #expect(reorder.jsonText == #"{"insertBefore":1,"itemIds":[3],"requestId":4,"type":"QUEUE_REORDER"}"#)
    }

    @Test(
        "missing itemIds and wrong types are errors with a path",
        arguments: [
            (#"{"type":"QUEUE_REMOVE","requestId":3}"#, "queue.item-ids-missing"),
            (#"{"type":"QUEUE_REORDER","requestId":3}"#, "queue.item-ids-missing"),
            (#"{"type":"QUEUE_UPDATE","requestId":3,"jump":"1"}"#, "json.type-mismatch"),
            (#"{"type":"QUEUE_REMOVE","requestId":3,"itemIds":["a"]}"#, "json.type-mismatch"),
        ])
    func errors(text: String, code: String) throws {
        let json = try parseJSON(text)
        var diagnostics: [Diagnostic] = []
        switch json["type"]?.stringValue {
        case "QUEUE_UPDATE": _ = QueueUpdateRequest.decode(from: json, at: .root, diagnostics: &diagnostics)
        case "QUEUE_REMOVE": _ = QueueRemoveRequest.decode(from: json, at: .root, diagnostics: &diagnostics)
        default: _ = QueueReorderRequest.decode(from: json, at: .root, diagnostics: &diagnostics)
        }
        #expect(diagnostics.map(\.code.rawValue) == [code])
        #expect(diagnostics.first?.fix != nil)
    }
}
