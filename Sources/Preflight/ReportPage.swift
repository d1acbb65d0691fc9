import CastModel
import Catalog
import Foundation

/// Writes `report.html`: one page that needs no network, with the summary, filters, a card per
/// item (its poster, tracks, per-device verdicts and fixes) and a "by problem" view. It is
/// written in pieces, so a catalog of 100,000 items never sits in memory as one string: cards
/// are streamed in catalog order while items finish, the header is written when the counts are
/// known, and the "by problem" view, which keeps a few lines per finding code (not per item),
/// goes in the footer. The page shows blocked items first, then those with warnings, then the
/// ready ones, by the cards' CSS `order`, so nothing has to be held back to sort them.
///
/// Posters are not embedded: each card points at its JPEG in `posters/` beside the page, so the
/// page stays small (a 1,000-item page with posters inlined was 12 MB).
///
/// A catalog of more than ``cardsPerPage`` items is paged: report.html keeps the summary, the
/// filters, the "by problem" view and the first page of cards; the next pages are
/// `report-pages/2.html`, `report-pages/3.html`…, each with its cards and the same search,
/// device filter and page links (``Paging``). A million items are a thousand pages of the
/// size a browser opens in well under a second, not one page of gigabytes.
enum ReportPage {
    /// How many finding codes the header shows as filter chips; the "by problem" view lists all.
    static let chipCount = 8
    /// Cards per page of a paged report.
    static let cardsPerPage = 1_000
    /// The folder of the second and later pages, inside the output folder.
    static let pagesFolder = "report-pages"

    /// Where the cards of a report of `items` items go.
    struct Paging: Sendable, Hashable {
        /// Pages in all; 1 when the report is one page.
        var count: Int
        var cardsPerPage: Int
        var items: Int

        init(items: Int, cardsPerPage: Int = ReportPage.cardsPerPage) {
            self.items = max(0, items)
            self.cardsPerPage = max(1, cardsPerPage)
            count = max(1, (self.items + self.cardsPerPage - 1) / self.cardsPerPage)
        }

        /// The page (from 1) holding the card of the item at `position` (from 0).
        func page(of position: Int) -> Int { min(count, position / cardsPerPage + 1) }

        /// The page's file, relative to the output folder.
        static func fileName(of page: Int) -> String {
            page <= 1 ? "report.html" : "\(ReportPage.pagesFolder)/\(page).html"
        }

        /// Every page file but report.html.
        var extraFileNames: [String] { count < 2 ? [] : (2...count).map(Self.fileName(of:)) }

        /// The links between pages: first, previous, the page's place, next, last. Every page
        /// resolves links against the output folder (pages in the folder say so with `<base>`).
        func navigation(at page: Int) -> String {
            var links: [String] = []
            let first = (page - 1) * cardsPerPage + 1
            let last = min(items, page * cardsPerPage)
            if page > 1 {
                links.append("<a href=\"\(Self.fileName(of: 1))\" rel=\"first\">First</a>")
                links.append("<a href=\"\(Self.fileName(of: page - 1))\" rel=\"prev\">Previous</a>")
            }
            links.append("<span>Page \(page) of \(count): items \(first)–\(last) of \(items)</span>")
            if page < count {
                links.append("<a href=\"\(Self.fileName(of: page + 1))\" rel=\"next\">Next</a>")
                links.append("<a href=\"\(Self.fileName(of: count))\" rel=\"last\">Last</a>")
            }
            // Styled here rather than in the shared styles, so a one-page report is as it was.
            return
                "<nav class=\"pages\" aria-label=\"Pages\" style=\"display:flex;flex-wrap:wrap;gap:6px 12px;margin:10px 0\">"
                + links.joined(separator: " ") + "</nav>\n"
        }
    }

    /// Everything before the cards: styles, the summary and the filter bar. `problems` gives
    /// the chips their severity.
    ///
    /// A paged report (`paging` of more than one page) adds the page links, and each chip
    /// says how many of its items are on this first page (`onFirstPage`), which is what its
    /// filter shows here.
    static func header(
        title: String, summary: PreflightSummary, devices: [(id: String, name: String)], catalog: String,
        problems: [String: ProblemGroup] = [:], servedOnLoopback: Bool = false, paging: Paging? = nil,
        onFirstPage: [String: Int] = [:]
    ) -> String {
        let paging = paging.flatMap { $0.count > 1 ? $0 : nil }
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)) — CastPrep preflight</title>
            <style>\(styles)</style>
            </head>
            <body>
            <header>
            <h1>\(escape(title))</h1>
            <p class="catalog">Catalog <code>\(escape(catalog))</code> · \(summary.items) item\(summary.items == 1 ? "" : "s")\
            \(summary.cached > 0 ? " · \(summary.cached) from cache" : "")</p>
            <div class="totals">
            <button type="button" class="total blocked" data-filter="blocked" aria-pressed="false"><b>\(summary.blocked)</b> blocked</button>
            <button type="button" class="total ready-with-warnings" data-filter="ready-with-warnings" aria-pressed="false"><b>\(summary.readyWithWarnings)</b> with warnings</button>
            <button type="button" class="total ready" data-filter="ready" aria-pressed="false"><b>\(summary.ready)</b> ready</button>
            </div>

            """
        if servedOnLoopback {
            html +=
                "<p class=\"run-note\">Served on loopback as asked with <code>--bind</code>: every URL points at this machine, "
                + "which suits the receiver emulator here but not a real device. Said once here, not on each card (<code>url.loopback</code>).</p>\n"
        }
        if !devices.isEmpty {
            html += "<table class=\"devices\"><caption>Plays on each device</caption><tbody>\n"
            for device in devices {
                let playable = summary.playableOnDevice[device.id, default: 0]
                html +=
                    "<tr><th scope=\"row\">\(escape(device.name))</th><td>\(playable) of \(summary.items)</td></tr>\n"
            }
            html += "</tbody></table>\n"
        }
        let common = summary.codes.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(chipCount)
        if !common.isEmpty {
            html += "<p class=\"common\">Items per finding: "
            html += common.map { code, items in
                chip(
                    code: code, items: items, severity: problems[code]?.severity,
                    onPage: paging.map { _ in onFirstPage[code, default: 0] })
            }.joined(separator: " ")
            html += "</p>\n"
        }
        html += """
            <form class="filters" role="search" onsubmit="return false">
            <label>Search <input type="search" id="search" placeholder="title, id or code"></label>
            <label>Device <select id="device"><option value="">any</option>
            """
        for device in devices { html += "<option value=\"\(escape(device.id))\">\(escape(device.name))</option>" }
        html += """
            </select></label>
            <span class="view" role="group" aria-label="View">\
            <button type="button" data-view="cards" aria-pressed="true">Cards</button>\
            <button type="button" data-view="problems" aria-pressed="false">By problem</button></span>
            <span id="shown" aria-live="polite"></span>
            </form>

            """
        if let paging { html += paging.navigation(at: 1) }
        html += """
            </header>
            <main id="items">

            """
        return html
    }

    /// The start of page `page` (2 or later) of a paged report: its links resolve against the
    /// output folder, the styles and script are the first page's, and it has the search and
    /// device filters for its own cards; the summary and the "by problem" view are on the
    /// first page.
    static func pageHeader(title: String, page: Int, paging: Paging, devices: [(id: String, name: String)]) -> String {
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <base href="../">
            <title>\(escape(title)), page \(page) of \(paging.count) — CastPrep preflight</title>
            <style>\(styles)</style>
            </head>
            <body>
            <header>
            <h1>\(escape(title))</h1>
            <p class="catalog">Page \(page) of \(paging.count) · the summary and the “by problem” view are on <a href="\(Paging.fileName(of: 1))">the first page</a></p>
            <form class="filters" role="search" onsubmit="return false">
            <label>Search <input type="search" id="search" placeholder="title, id or code"></label>
            <label>Device <select id="device"><option value="">any</option>
            """
        for device in devices { html += "<option value=\"\(escape(device.id))\">\(escape(device.name))</option>" }
        html += """
            </select></label>
            <span id="shown" aria-live="polite"></span>
            </form>

            """
        html += paging.navigation(at: page)
        html += """
            </header>
            <main id="items">

            """
        return html
    }

    /// The end of page `page` (2 or later) of a paged report.
    static func pageFooter(page: Int, paging: Paging) -> String {
        """
        </main>
        <section id="problems" hidden></section>
        <footer>\(paging.navigation(at: page))Made by CastPrep. Open any card's fixes, apply them, and run <code>castprep preflight</code> again.</footer>
        <script>\(script)</script>
        </body>
        </html>

        """
    }

    /// A finding code's filter chip: the code and how many items have it.
    /// `onPage`, in a paged report: how many of them are on this page.
    private static func chip(code: String, items: Int, severity: Diagnostic.Severity?, onPage: Int? = nil) -> String {
        let pageCount = onPage.map { " data-on-page=\"\($0)\"" } ?? ""
        let pageTitle = onPage.map { ", \($0) on this page" } ?? ""
        return
            "<button type=\"button\" class=\"chip \(severity?.rawValue ?? "warning")\" data-code=\"\(escape(code))\"\(pageCount) aria-pressed=\"false\" "
            + "title=\"\(items) item\(items == 1 ? "" : "s") with \(escape(code))\(pageTitle)\"><code>\(escape(code))</code> <b>\(items)</b></button>"
    }

    /// How many bytes to keep for ``header(title:summary:devices:catalog:problems:)`` before
    /// its summary is known: the header with every count at its widest, plus room for the
    /// chips of the most common finding codes. A longer header still works, at the cost of a
    /// copy.
    static func headerReservation(
        title: String, devices: [(id: String, name: String)], catalog: String, servedOnLoopback: Bool = false,
        paging: Paging? = nil
    ) -> Int {
        var widest = PreflightSummary()
        (widest.items, widest.ready, widest.readyWithWarnings, widest.blocked, widest.cached) = (
            Int.max, Int.max, Int.max, Int.max, Int.max
        )
        for device in devices { widest.playableOnDevice[device.id] = Int.max }
        let roomyCode = String(repeating: "x", count: 64)
        let isPaged = (paging?.count ?? 1) > 1
        let chipRoom =
            chip(code: roomyCode, items: Int.max, severity: .warning, onPage: isPaged ? Int.max : nil).utf8.count + 1
        let codeRoom = chipCount * chipRoom + #"<p class="common">Items per finding: </p>"#.utf8.count + 1
        return header(
            title: title, summary: widest, devices: devices, catalog: catalog, servedOnLoopback: servedOnLoopback,
            paging: paging
        ).utf8.count
            + codeRoom
    }

    /// One item's card. Its poster, when there is one, is the file beside the page. In a run
    /// served on loopback, the header says once what each URL's `url.loopback` note would.
    static func card(_ item: ItemReport, servedOnLoopback: Bool = false) -> String {
        let blockedOn = item.devices.filter { $0.readiness == .blocked }.map(\.device)
        let allFindings = item.allFindings
        let problems = ItemReport.problems(in: allFindings)
        // Searched together with data-codes, which holds the other codes.
        var notes: [String] = []
        for finding in allFindings where finding.severity == .note && !notes.contains(finding.code.rawValue) {
            notes.append(finding.code.rawValue)
        }
        let searchable = ([item.id, item.title ?? "", item.subtitle ?? ""] + notes).joined(separator: " ").lowercased()
        var html = "<article class=\"card \(item.readiness.rawValue)\" id=\"item-\(escape(item.id))\""
        html +=
            " data-blocked-on=\"\(escape(blockedOn.joined(separator: " ")))\" data-codes=\"\(escape(problems.map(\.code).joined(separator: " ")))\""
        html += " data-search=\"\(escape(searchable))\">\n"
        if let poster = item.poster, !poster.isEmpty {
            let reference = poster.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? poster
            html += "<img class=\"poster\" alt=\"\" loading=\"lazy\" src=\"\(escape(reference))\">\n"
        } else {
            let (symbol, kind) = placeholder(for: item)
            html +=
                "<div class=\"poster none \(kind)\" role=\"img\" aria-label=\"\(kind), no poster\">\(symbol)</div>\n"
        }
        html += "<div class=\"body\">\n<h2>\(escape(item.title ?? item.id))</h2>\n"
        html +=
            "<p class=\"verdict \(item.readiness.rawValue)\">\(escape(item.readiness.label))\(item.fromCache ? cacheBadge : cacheMarker)</p>\n"
        var facts: [String] = ["<code>\(escape(item.id))</code>"]
        if let summary = item.mediaSummary { facts.append(escape(summary)) }
        if let duration = item.duration { facts.append(formatDuration(duration)) }
        html += "<p class=\"facts\">\(facts.joined(separator: " · "))</p>\n"
        if let url = item.contentID {
            html +=
                "<p class=\"url\"><code>\(escape(url))</code>\(item.contentType.map { " <span class=\"type\">\(escape($0))</span>" } ?? "")</p>\n"
        }
        if !item.tracks.isEmpty {
            html +=
                "<details><summary>\(item.tracks.count) text track\(item.tracks.count == 1 ? "" : "s")</summary><ul class=\"tracks\">\n"
            for track in item.tracks {
                var line = "#\(track.trackID) \(escape(track.name ?? track.language ?? "untitled"))"
                if let language = track.language { line += " <code>\(escape(language))</code>" }
                line += " · \(escape(track.format ?? "?")) from <code>\(escape(track.source))</code>"
                if let cues = track.cues { line += " · \(cues) cue\(cues == 1 ? "" : "s")" }
                if let vtt = track.webVTT { line += " → <code>\(escape(vtt))</code>" }
                html += "<li>\(line)</li>\n"
            }
            html += "</ul></details>\n"
        }
        if item.devices.count > 1, blockedOn.count == item.devices.count {
            // Nine red pills saying the same thing are one line.
            let errors = problems.filter { $0.severity == .error }.map { "<code>\(escape($0.code))</code>" }
            html +=
                "<p class=\"everywhere blocked\">Blocked on every device\(errors.isEmpty ? "" : ": " + errors.joined(separator: ", "))</p>\n"
        } else if let first = item.devices.first, item.devices.count > 1,
            item.devices.allSatisfy({ $0.readiness == first.readiness })
        {
            html +=
                "<p class=\"everywhere \(first.readiness.rawValue)\">\(escape(capitalized(first.readiness.label))) on every device</p>\n"
        } else if !item.devices.isEmpty {
            // One line per verdict naming its devices, not a pill per device; the ready ones
            // are named only when no other line does.
            let playable = item.devices.count - blockedOn.count
            html +=
                "<details class=\"devices-detail\" open><summary>Plays on \(playable) of \(item.devices.count) devices</summary>"
            html += "<ul class=\"device-verdicts\">\n"
            for readiness in Readiness.allCases.reversed() {
                let names = item.devices.filter { $0.readiness == readiness }.map { escape($0.name) }
                guard !names.isEmpty else { continue }
                let named =
                    readiness == .ready && names.count > 2 && names.count < item.devices.count
                    ? "the other \(names.count)" : names.joined(separator: ", ")
                html +=
                    "<li class=\"\(readiness.rawValue)\"><b>\(escape(capitalized(readiness.label)))</b> on \(named)</li>\n"
            }
            html += "</ul></details>\n"
        }
        let lines = findingLines(item).filter {
            !(servedOnLoopback && $0.severity == .note && $0.code == "url.loopback")
        }
        for (findings, notes) in [
            (lines.filter { $0.severity != .note }, false), (lines.filter { $0.severity == .note }, true),
        ] where !findings.isEmpty {
            if notes {
                html +=
                    "<details class=\"notes\"><summary>\(findings.count) note\(findings.count == 1 ? "" : "s")</summary>"
            }
            html += "<ul class=\"findings\">\n"
            for line in findings {
                html +=
                    "<li class=\"\(line.severity.rawValue)\"><code>\(escape(line.code))</code> \(escape(line.message))"
                if !line.devices.isEmpty {
                    html += " <small>— \(escape(deviceList(line.devices, of: item.devices.map(\.name))))</small>"
                }
                // The media's URL is on the card already.
                if let url = line.url, url != item.contentID { html += " <small><code>\(escape(url))</code></small>" }
                html += "</li>\n"
            }
            html += notes ? "</ul></details>\n" : "</ul>\n"
        }
        // A fix only a note asks for (the loopback address the emulator is fine with) is not
        // something to do.
        let wanted = Set(
            allFindings.filter { $0.severity != .note }.compactMap(\.fix) + item.devices.compactMap(\.fix))
        let noteFixes = Set(allFindings.filter { $0.severity == .note }.compactMap(\.fix)).subtracting(wanted)
        let fixes = item.fixes.filter { !noteFixes.contains($0) }
        if !fixes.isEmpty {
            html += "<details class=\"fixes\" open><summary>How to fix</summary><ol>\n"
            for fix in fixes { html += "<li><pre>\(fixHTML(fix))</pre></li>\n" }
            html += "</ol></details>\n"
        }
        html += "</div>\n</article>\n"
        return html
    }

    /// A finding as the card shows it: said once, with the devices it was found on.
    struct FindingLine: Equatable {
        var severity: Diagnostic.Severity
        var code: String
        var message: String
        var url: String?
        /// The devices that reported it; empty for a finding about the item itself.
        var devices: [String] = []
    }

    /// The item's findings, most severe first, each said once: a device's finding that other
    /// devices report too (the same code and message once the device's own name is taken off
    /// the front) is one line naming those devices.
    static func findingLines(_ item: ItemReport) -> [FindingLine] {
        var lines: [FindingLine] = []
        for finding in item.diagnostics {
            let line = FindingLine(
                severity: finding.severity, code: finding.code.rawValue, message: finding.message, url: finding.url)
            if !lines.contains(line) { lines.append(line) }
        }
        for device in item.devices {
            for reason in device.reasons {
                var message = reason.message
                for separator in [" ", ": "] where message.hasPrefix(device.name + separator) {
                    let rest = message.dropFirst(device.name.count + separator.count)
                    message = rest.prefix(1).uppercased() + rest.dropFirst()
                }
                if let index = lines.firstIndex(where: {
                    ($0.severity, $0.code, $0.message, $0.url) == (
                        reason.severity, reason.code.rawValue, message, reason.url
                    )
                }) {
                    if !lines[index].devices.contains(device.name) { lines[index].devices.append(device.name) }
                } else {
                    lines.append(
                        FindingLine(
                            severity: reason.severity, code: reason.code.rawValue, message: message, url: reason.url,
                            devices: [device.name]))
                }
            }
        }
        return lines.enumerated().sorted {
            ($0.element.severity, $1.element.code, $1.offset) > ($1.element.severity, $0.element.code, $0.offset)
        }.map(\.element)
    }

    /// The devices a finding was found on, in the fewest words: every device, every device
    /// but one to three, or their names.
    static func deviceList(_ names: [String], of all: [String]) -> String {
        if all.count > 1, Set(all).isSubset(of: names) { return "every device" }
        let others = all.filter { !names.contains($0) }
        if all.count > 3, others.count <= 3, others.count < names.count {
            return "every device but " + others.joined(separator: ", ")
        }
        return names.joined(separator: ", ")
    }

    /// A fix as the page shows it: escaped, each word with a hyphen kept whole (browsers
    /// break lines after a hyphen, which would split `-movflags` or a file name; a word
    /// longer than the line still wraps inside itself).
    static func fixHTML(_ fix: String) -> String {
        // An ASCII fix (any ffmpeg command with ASCII paths) is split by its bytes: the same
        // words and spaces as by characters, without a grapheme walk per character.
        if fix.utf8.allSatisfy({ $0 < 0x80 }) {
            var html = ""
            html.reserveCapacity(fix.utf8.count + 64)
            var wordStart = fix.utf8.startIndex
            var hasHyphen = false
            func endWord(at end: String.Index) {
                let word = String(fix[wordStart..<end])
                html += hasHyphen ? "<span>" + escape(word) + "</span>" : escape(word)
                hasHyphen = false
            }
            var index = fix.utf8.startIndex
            while index < fix.utf8.endIndex {
                let byte = fix.utf8[index]
                let next = fix.utf8.index(after: index)
                if byte == 0x20 || (0x09...0x0D).contains(byte) {
                    endWord(at: index)
                    html.unicodeScalars.append(Unicode.Scalar(byte))
                    wordStart = next
                } else if byte == 0x2D {
                    hasHyphen = true
                }
                index = next
            }
            endWord(at: fix.utf8.endIndex)
            return html
        }
        var html = ""
        var word = ""
        func endWord() {
            html += word.contains("-") ? "<span>" + escape(word) + "</span>" : escape(word)
            word = ""
        }
        for character in fix {
            if character.isWhitespace {
                endWord()
                html.append(character)
            } else {
                word.append(character)
            }
        }
        endWord()
        return html
    }

    private static func capitalized(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }

    /// What stands in for a missing poster: live, audio or video (from the probe's streams,
    /// or the content type or extension when there was no probe), or unknown.
    private static func placeholder(for item: ItemReport) -> (symbol: String, kind: String) {
        if item.streamType == "LIVE" { return ("LIVE", "live") }
        switch item.hasVideo {
        case true?: return ("▶", "video")
        case false?: return ("♪", "audio")
        case nil: return ("?", "media")
        }
    }

    /// Where a card says it came from the cache; cached cards are rendered once, when fresh.
    static let cacheMarker = "<!--cache-->"
    static let cacheBadge = " <span class=\"cached\">cached</span>"

    /// The end of the page: the "by problem" view and the filter script. `problems` holds
    /// one group per finding code.
    ///
    /// In a paged report (`paging` of more than one page) the page links follow the cards,
    /// and the view says its lists hold this page's items.
    static func footer(problems: [ProblemGroup], paging: Paging? = nil) -> String {
        let paging = paging.flatMap { $0.count > 1 ? $0 : nil }
        var html =
            "</main>\n" + (paging?.navigation(at: 1) ?? "") + "<section id=\"problems\" hidden>\n<h2>By problem</h2>\n"
        if let paging {
            html +=
                "<p class=\"example\">Counts are of all \(paging.items) items; the lists and cards are those of this page.</p>\n"
        }
        if problems.isEmpty { html += "<p>No warnings or errors.</p>\n" }
        let ordered = problems.sorted { ($0.severity, $0.items, $1.code) > ($1.severity, $1.items, $0.code) }
        for group in ordered {
            let items = "\(group.items) item\(group.items == 1 ? "" : "s")"
            html += "<details class=\"problem \(group.severity.rawValue)\" data-code=\"\(escape(group.code))\">"
            html += "<summary><code>\(escape(group.code))</code> · \(items)</summary>\n"
            html += "<p class=\"example\">\(escape(group.message))</p>\n"
            if let fix = group.fix {
                html +=
                    "<p class=\"fix-label\">How to fix\(group.fixesDiffer ? " (as for “\(escape(group.fixShownFor))”; each card has the command for its own files)" : "")</p>"
                html += "<pre>\(fixHTML(fix))</pre>\n"
            }
            html +=
                "<p><button type=\"button\" data-show-code=\"\(escape(group.code))\">Show the \(items) as cards</button></p>"
            html += "<ul class=\"problem-items\"></ul></details>\n"
        }
        html += """
            </section>
            <footer>Made by CastPrep. Open any card's fixes, apply them, and run <code>castprep preflight</code> again.</footer>
            <script>\(script)</script>
            </body>
            </html>

            """
        return html
    }

    /// Text made safe for HTML content and attribute values.
    static func escape(_ text: String) -> String {
        // Most texts (ids, codes, URLs, messages) have nothing to escape: they are kept as they are.
        let special: (UInt8) -> Bool = { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 || $0 == 0 }
        guard text.utf8.contains(where: special) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\u{0}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// `1:02:03` or `4:05`; empty for what is not a duration (negative, infinite, or past
    /// ``CatalogItem/maximumDuration``, which a catalog or probe can still hand over).
    static func formatDuration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds <= CatalogItem.maximumDuration else { return "" }
        let total = Int(seconds.rounded())
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
    }

    private static let styles = """
        :root{--ok:#1b7f3b;--warn:#a86400;--bad:#b3261e;--bg:#f6f7f9;--card:#fff;--ink:#1d1d1f;--muted:#5f6368}
        @media (prefers-color-scheme:dark){:root{--bg:#15171a;--card:#202328;--ink:#e8eaed;--muted:#9aa0a6;--ok:#5bd17d;--warn:#f5b14c;--bad:#f28b82}}
        *{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink);overflow-wrap:break-word}
        header,main,#problems,footer{max-width:1100px;margin:0 auto;padding:12px 16px}h1{margin:8px 0 4px;font-size:1.5em}
        .catalog,.facts,.common,footer,.example,.run-note{color:var(--muted)}code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em}
        button{font:inherit;color:inherit;background:var(--card);border:1px solid currentColor;border-radius:8px;cursor:pointer}
        .totals{display:flex;gap:8px;flex-wrap:wrap;margin:10px 0}.total{padding:8px 12px}
        .total b{font-size:1.3em;margin-right:4px}button[aria-pressed=true]{outline:3px solid currentColor}
        .ready{color:var(--ok)}.ready-with-warnings{color:var(--warn)}.blocked{color:var(--bad)}
        .devices{border-collapse:collapse;margin:8px 0}.devices td{white-space:nowrap}.devices th,.devices td{text-align:left;padding:2px 12px 2px 0;font-weight:normal}.devices caption{text-align:left;font-weight:600}
        .common{display:flex;flex-wrap:wrap;gap:6px;align-items:center}.chip{padding:2px 8px;border-radius:12px;max-width:100%;overflow-wrap:anywhere;text-align:left}
        .chip.error{color:var(--bad)}.chip.warning{color:var(--warn)}.chip code{color:var(--ink)}
        .filters{display:flex;gap:8px 12px;flex-wrap:wrap;align-items:center;margin:12px 0}.filters label{display:flex;gap:6px;align-items:center;min-width:0;max-width:100%}
        .filters input,.filters select{font:inherit;padding:4px 6px;min-width:0;max-width:100%}.filters select{width:14em}.filters input{width:12em}
        .view{display:flex}.view button{padding:4px 10px;border-radius:0}.view button:first-child{border-radius:8px 0 0 8px}.view button:last-child{border-radius:0 8px 8px 0;border-left:0}
        main{display:grid;gap:12px;grid-template-columns:repeat(auto-fill,minmax(min(320px,100%),1fr))}
        .card{min-width:0;content-visibility:auto;contain-intrinsic-size:auto 640px;background:var(--card);color:var(--ink);border-radius:12px;border-top:6px solid currentColor;overflow:hidden;box-shadow:0 1px 3px #0002}
        .card.blocked{order:0;border-top-color:var(--bad)}.card.ready-with-warnings{order:1;border-top-color:var(--warn)}.card.ready{order:2;border-top-color:var(--ok)}
        .poster{display:block;width:100%;height:auto;aspect-ratio:16/9;object-fit:cover;background:#000}
        .poster.none{display:flex;align-items:center;justify-content:center;color:#fff;font-size:2em}.poster.video{background:#263238}.poster.audio{background:#3e2723}
        .body{padding:10px 14px}h2{margin:0 0 4px;font-size:1.1em}.verdict{margin:0 0 6px;font-weight:600}.cached{font-weight:normal;color:var(--muted);font-size:.85em}
        .url{overflow-wrap:anywhere;margin:4px 0}.type{color:var(--muted)}ul{padding-left:18px;margin:6px 0}.everywhere{font-weight:600;margin:6px 0}
        .device-verdicts{list-style:none;padding:0;font-size:.9em}.device-verdicts li{color:var(--ink)}.device-verdicts b{font-weight:600}
        .device-verdicts .blocked b{color:var(--bad)}.device-verdicts .ready-with-warnings b{color:var(--warn)}.device-verdicts .ready b{color:var(--ok)}.findings li.error{color:var(--bad)}.findings li.warning{color:var(--warn)}.findings li.note{color:var(--muted)}
        .findings li code,.everywhere code{color:var(--ink)}pre{white-space:pre-wrap;overflow-wrap:break-word;background:var(--bg);padding:6px;border-radius:6px;margin:2px 0}
        pre span{display:inline-block;max-width:100%}.findings li>code,.everywhere code,.chip code,.problem summary code{white-space:nowrap}
        .problem{background:var(--card);border-radius:12px;border-left:6px solid currentColor;padding:8px 14px;margin:0 0 10px}.problem.error{color:var(--bad)}.problem.warning{color:var(--warn)}
        .problem>*:not(summary){color:var(--ink)}.problem summary code{color:var(--ink);font-size:1em}.problem button{padding:4px 10px}.problem .example{color:var(--muted)}
        .problem-items li.blocked::marker{color:var(--bad)}.problem-items li.ready-with-warnings::marker{color:var(--warn)}a{color:inherit}
        [hidden]{display:none!important}
        """

    private static let script = """
        (function(){
          function all(selector,root){return Array.prototype.slice.call((root||document).querySelectorAll(selector));}
          function has(list,word){return (' '+list+' ').indexOf(' '+word+' ')>=0;}
          var cards=all('.card'),main=document.getElementById('items'),problems=document.getElementById('problems');
          var search=document.getElementById('search'),device=document.getElementById('device'),shown=document.getElementById('shown');
          var totals=all('.total'),chips=all('.chip'),views=all('.view button'),wanted=null,code=null;
          function press(buttons,key,value){buttons.forEach(function(b){b.setAttribute('aria-pressed',String(b.dataset[key]===value));});}
          function apply(){
            var text=search.value.trim().toLowerCase(),dev=device.value,count=0;
            cards.forEach(function(card){
              var ok=(!wanted||card.classList.contains(wanted))&&(!code||has(card.dataset.codes,code))
                &&(!text||(card.dataset.search+' '+card.dataset.codes).indexOf(text)>=0)&&(!dev||!has(card.dataset.blockedOn,dev));
              card.hidden=!ok;if(ok){count++;}
            });
            shown.textContent=count+' of '+cards.length+' shown';
            press(totals,'filter',wanted);press(chips,'code',code);
          }
          function show(view){main.hidden=view!=='cards';problems.hidden=view==='cards';press(views,'view',view);}
          totals.forEach(function(b){b.addEventListener('click',function(){wanted=wanted===b.dataset.filter?null:b.dataset.filter;show('cards');apply();});});
          chips.forEach(function(b){b.addEventListener('click',function(){code=code===b.dataset.code?null:b.dataset.code;show('cards');apply();});});
          views.forEach(function(b){b.addEventListener('click',function(){show(b.dataset.view);});});
          all('details',problems).forEach(function(group){group.addEventListener('toggle',function(){
            if(!group.open||group.dataset.filled){return;}
            group.dataset.filled='1';
            var list=group.querySelector('ul'),limit=200,count=0;
            cards.forEach(function(card){
              if(!has(card.dataset.codes,group.dataset.code)){return;}
              count++;if(count>limit){return;}
              var li=document.createElement('li'),a=document.createElement('a');
              li.className=card.classList[1];a.href='#'+card.id;a.textContent=card.querySelector('h2').textContent;
              li.appendChild(a);list.appendChild(li);
            });
            if(count>limit){var more=document.createElement('li');more.textContent='and '+(count-limit)+' more';list.appendChild(more);}
          });});
          problems.addEventListener('click',function(event){
            var target=event.target;
            if(target.tagName==='A'){wanted=null;code=null;search.value='';device.value='';show('cards');apply();}
            else if(target.dataset.showCode){wanted=null;code=target.dataset.showCode;search.value='';device.value='';show('cards');apply();main.scrollIntoView();}
          });
          search.addEventListener('input',apply);device.addEventListener('change',apply);apply();
        })();
        """
}

/// What the "by problem" view says about one finding code, gathered as items are written:
/// one per code, never one per item, so it stays small however long the catalog is.
struct ProblemGroup: Sendable, Hashable {
    var code: String
    /// The most severe finding of this code on any item.
    var severity: Diagnostic.Severity
    /// Items with the code.
    var items = 0
    /// The first item's message.
    var message: String
    /// The first fix given for the code.
    var fix: String?
    /// The title (or id) of the item whose fix is shown.
    var fixShownFor: String
    /// Whether items were given different fixes (an ffmpeg command names each item's files).
    var fixesDiffer = false

    init(_ problem: ItemProblem, itemName: String) {
        code = problem.code
        severity = problem.severity
        message = problem.message
        fix = problem.fix
        fixShownFor = itemName
    }

    /// Counts one more item with this code.
    mutating func add(_ problem: ItemProblem, itemName: String) {
        items += 1
        severity = max(severity, problem.severity)
        guard let other = problem.fix else { return }
        if let fix {
            if other != fix { fixesDiffer = true }
        } else {
            fix = other
            fixShownFor = itemName
        }
    }
}
