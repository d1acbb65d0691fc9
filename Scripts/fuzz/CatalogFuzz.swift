// libFuzzer entry point for the JSON parser, the catalog readers and Cast message decoding
// (from the tree, and LOAD straight from the bytes, which must agree).
// Built by Scripts/fuzz/catalog; CATALOG_FUZZ_TARGET picks what the input is fed to.
import CastModel
import Catalog
import Foundation
import JSONSupport

/// Which entry point to exercise, read once.
let fuzzTarget = ProcessInfo.processInfo.environment["CATALOG_FUZZ_TARGET"] ?? "catalog"
let fuzzResolver = URLResolver(documentURL: URL(string: "https://catalog.example/dir/catalog.json")!)
/// Where the catalog target writes each input, for the readers that take a path.
let fuzzPath = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-fuzz-\(getpid()).json").path

/// The scanner must judge every text exactly as the parser does: same verdict, same error.
func checkScanner(_ bytes: [UInt8]) {
    let parsed = Result { () throws(JSONSyntaxError) in try JSONParser().parse(bytes) }
    let scanned: JSONSyntaxError? = bytes.withUnsafeBufferPointer { buffer in
        var scanner = JSONScanner(bytes: buffer)
        do {
            try scanner.scanDocument { try $0.skipValue() }
            return nil
        } catch let error as JSONSyntaxError {
            return error
        } catch {
            fatalError("the scanner threw \(error)")
        }
    }
    switch parsed {
    case .success: if let scanned { fatalError("the scanner refused what the parser read: \(scanned)") }
    case .failure(let error): if scanned != error { fatalError("scanner \(String(describing: scanned)) != parser \(error)") }
    }
}

/// Streaming a catalog must give what reading it whole gives.
func checkStream(_ bytes: [UInt8]) {
    guard FileManager.default.createFile(atPath: fuzzPath, contents: Data(bytes)) else { return }
    func rendered(_ diagnostics: [Diagnostic]) -> [String] {
        diagnostics.map { "\($0.location?.line ?? 0):\($0.location?.column ?? 0) \($0.rendered(colored: false))" }.sorted()
    }
    let tree = Result { try CatalogReader().read(contentsOf: fuzzPath) }
    var items: [CatalogItem] = []
    var findings: [Diagnostic] = []
    let streamed = Result {
        try CatalogStreamReader(options: .init(batchSize: 3)).read(contentsOf: fuzzPath) { batch, found, _ in
            items += batch
            findings += found
        }
    }
    switch (tree, streamed) {
    case (.success(let whole), .success(let summary)):
        guard whole.items == items, rendered(whole.diagnostics) == rendered(findings + summary.diagnostics) else {
            fatalError("streaming read something else than the tree reader")
        }
    case (.failure(let one as CatalogError), .failure(let other as CatalogError)):
        guard one.diagnostic == other.diagnostic else { fatalError("different errors: \(one) / \(other)") }
    default: fatalError("one reader failed, the other did not: \(tree) / \(streamed)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch fuzzTarget {
    case "json":
        if let document = try? JSONParser().parse(bytes) {
            // Writing and re-parsing must agree with the first parse.
            let text = JSONWriter.compact.bytes(from: document.value)
            guard let again = try? JSONParser().parse(text), again.value == document.value else {
                fatalError("JSON round trip changed the value")
            }
            _ = JSONSourceLocator(bytes: bytes).positions(of: document.duplicateKeys.map(\.path))
        }
        checkScanner(bytes)
    case "message":
        let plain = bytes.withUnsafeBufferPointer { LoadRequest.decodePlain($0) }
        let direct = plain?.request
        if let plain {
            // The size validate checks the frame with is the written size or a bound above it.
            var written: [UInt8] = []
            plain.request.writeCompactJSON(into: &written)
            if plain.frameCheckSize < written.count { fatalError("the frame-size bound is below the written size") }
        }
        guard let document = try? JSONParser().parse(bytes) else {
            if direct != nil { fatalError("a LOAD was decoded directly from text the parser refuses") }
            return 0
        }
        var diagnostics: [Diagnostic] = []
        let decoded = CastMessage.decode(from: document.value, diagnostics: &diagnostics)
        // The direct decoder takes only what the tree path decodes without a finding, into the
        // same LOAD (validate prints the same either way).
        if let direct {
            guard document.duplicateKeys.isEmpty, diagnostics.isEmpty, decoded == .load(direct) else {
                fatalError("the direct LOAD decoder and the tree path disagree")
            }
        }
        if let message = decoded {
            _ = CastValidator().validate(message)
            _ = JSONWriter.compact.bytes(from: message.jsonValue)
        }
    default:
        checkStream(bytes)
        for format in CatalogFormat.allCases {
            guard let result = try? CatalogReader(options: .init(format: format)).read(bytes, file: "c", resolver: fuzzResolver)
            else { continue }
            let builder = CastRequestBuilder()
            for item in result.items.prefix(64) {
                // Reports and status lines format durations as whole seconds: every reader must
                // hand over only durations that convert (1e300 once trapped the report).
                if let duration = item.duration, !(0...CatalogItem.maximumDuration).contains(duration) {
                    fatalError("item duration \(duration) passed the readers")
                }
                let (load, found) = builder.loadRequest(for: item)
                _ = result.locating(found + CastValidator().validate(load))
            }
        }
    }
    return 0
}
