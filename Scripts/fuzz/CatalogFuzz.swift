// libFuzzer entry point for the JSON parser, the catalog readers and Cast message decoding.
// Built by Scripts/fuzz/catalog; CATALOG_FUZZ_TARGET picks what the input is fed to.
import CastModel
import Catalog
import Foundation
import JSONSupport

/// Which entry point to exercise, read once.
let fuzzTarget = ProcessInfo.processInfo.environment["CATALOG_FUZZ_TARGET"] ?? "catalog"
let fuzzResolver = URLResolver(documentURL: URL(string: "https://catalog.example/dir/catalog.json")!)

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
    case "message":
        guard let document = try? JSONParser().parse(bytes) else { return 0 }
        var diagnostics: [Diagnostic] = []
        if let message = CastMessage.decode(from: document.value, diagnostics: &diagnostics) {
            _ = CastValidator().validate(message)
            _ = JSONWriter.compact.bytes(from: message.jsonValue)
        }
    default:
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
