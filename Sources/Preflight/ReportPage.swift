import CastModel
import Catalog
import Foundation

/// Writes `report.html`: one self-contained page (no network, no external files) with the
/// summary, filters, and a card per item showing its poster, tracks, per-device verdicts and
/// fixes. It is written in pieces, so a catalog of 100,000 items never sits in memory as one
/// string: cards are streamed while items finish, the header is written when the counts are
/// known.
enum ReportPage {
    /// Everything before the cards: styles, the summary and the filter bar.
    static func header(title: String, summary: PreflightSummary, devices: [(id: String, name: String)], catalog: String) -> String {
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
            <button class="total ready" data-filter="ready" aria-pressed="false"><b>\(summary.ready)</b> ready</button>
            <button class="total ready-with-warnings" data-filter="ready-with-warnings" aria-pressed="false"><b>\(summary.readyWithWarnings)</b> with warnings</button>
            <button class="total blocked" data-filter="blocked" aria-pressed="false"><b>\(summary.blocked)</b> blocked</button>
            </div>

            """
        if !devices.isEmpty {
            html += "<table class=\"devices\"><caption>Plays on each device</caption><tbody>\n"
            for device in devices {
                let playable = summary.playableOnDevice[device.id, default: 0]
                html += "<tr><th scope=\"row\">\(escape(device.name))</th><td>\(playable) of \(summary.items)</td></tr>\n"
            }
            html += "</tbody></table>\n"
        }
        let common = summary.codes.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(8)
        if !common.isEmpty {
            html += "<p class=\"common\">Most common findings: "
            html += common.map { "<code>\(escape($0.key))</code> ×\($0.value)" }.joined(separator: ", ")
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
            <span id="shown" aria-live="polite"></span>
            </form>
            </header>
            <main id="items">

            """
        return html
    }

    /// How many bytes to keep for ``header(title:summary:devices:catalog:)`` before its
    /// summary is known: the header with every count at its widest, plus room for the eight
    /// most common finding codes. A longer header still works, at the cost of a copy.
    static func headerReservation(title: String, devices: [(id: String, name: String)], catalog: String) -> Int {
        var widest = PreflightSummary()
        (widest.items, widest.ready, widest.readyWithWarnings, widest.blocked, widest.cached) = (Int.max, Int.max, Int.max, Int.max, Int.max)
        for device in devices { widest.playableOnDevice[device.id] = Int.max }
        let codeRoom = 8 * (#"<code></code> ×, "#.utf8.count + String(Int.max).count + 96) + #"<p class="common">Most common findings: </p>"#.utf8.count + 1
        return header(title: title, summary: widest, devices: devices, catalog: catalog).utf8.count + codeRoom
    }

    /// One item's card. `posterData` is the JPEG to inline, when there is one.
    static func card(_ item: ItemReport, posterData: [UInt8]?) -> String {
        let blockedOn = item.devices.filter { $0.readiness == .blocked }.map(\.device)
        let searchable = ([item.id, item.title ?? "", item.subtitle ?? ""] + item.allFindings.map(\.code.rawValue))
            .joined(separator: " ").lowercased()
        var html = "<article class=\"card \(item.readiness.rawValue)\" id=\"item-\(escape(item.id))\" data-readiness=\"\(item.readiness.rawValue)\""
        html += " data-blocked-on=\"\(escape(blockedOn.joined(separator: " ")))\" data-search=\"\(escape(searchable))\">\n"
        if let posterData, !posterData.isEmpty {
            html += "<img class=\"poster\" alt=\"\" loading=\"lazy\" src=\"data:image/jpeg;base64,\(Data(posterData).base64EncodedString())\">\n"
        } else {
            html += "<div class=\"poster none\" aria-hidden=\"true\">\(item.streamType == "LIVE" ? "LIVE" : "♪")</div>\n"
        }
        html += "<div class=\"body\">\n<h2>\(escape(item.title ?? item.id))</h2>\n"
        html += "<p class=\"verdict \(item.readiness.rawValue)\">\(escape(item.readiness.label))\(item.fromCache ? cacheBadge : cacheMarker)</p>\n"
        var facts: [String] = ["<code>\(escape(item.id))</code>"]
        if let summary = item.mediaSummary { facts.append(escape(summary)) }
        if let duration = item.duration { facts.append(formatDuration(duration)) }
        html += "<p class=\"facts\">\(facts.joined(separator: " · "))</p>\n"
        if let url = item.contentID {
            html += "<p class=\"url\"><code>\(escape(url))</code>\(item.contentType.map { " <span class=\"type\">\(escape($0))</span>" } ?? "")</p>\n"
        }
        if !item.tracks.isEmpty {
            html += "<details><summary>\(item.tracks.count) text track\(item.tracks.count == 1 ? "" : "s")</summary><ul class=\"tracks\">\n"
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
        if !item.devices.isEmpty {
            let playable = item.devices.filter { $0.readiness != .blocked }.count
            html += "<details class=\"devices-detail\"\(playable < item.devices.count ? " open" : "")><summary>Plays on \(playable) of \(item.devices.count) devices</summary>"
            html += "<ul class=\"device-verdicts\">\n"
            for device in item.devices {
                let reasons = device.reasons.filter { $0.severity != .note }.map { escape($0.message) }.joined(separator: "; ")
                html += "<li class=\"\(device.readiness.rawValue)\" title=\"\(reasons)\"><span>\(escape(device.name))</span> \(escape(device.readiness.label))</li>\n"
            }
            html += "</ul></details>\n"
        }
        let sorted = item.allFindings.sorted { ($0.severity, $1.code) > ($1.severity, $0.code) }
        for (findings, notes) in [(sorted.filter { $0.severity != .note }, false), (sorted.filter { $0.severity == .note }, true)] where !findings.isEmpty {
            if notes { html += "<details class=\"notes\"><summary>\(findings.count) note\(findings.count == 1 ? "" : "s")</summary>" }
            html += "<ul class=\"findings\">\n"
            for finding in findings {
                html += "<li class=\"\(finding.severity.rawValue)\"><code>\(escape(finding.code.rawValue))</code> \(escape(finding.message))"
                if let url = finding.url { html += " <small><code>\(escape(url))</code></small>" }
                html += "</li>\n"
            }
            html += notes ? "</ul></details>\n" : "</ul>\n"
        }
        if !item.fixes.isEmpty {
            html += "<details class=\"fixes\" open><summary>How to fix</summary><ol>\n"
            for fix in item.fixes { html += "<li><pre>\(escape(fix))</pre></li>\n" }
            html += "</ol></details>\n"
        }
        html += "</div>\n</article>\n"
        return html
    }

    /// Where a card says it came from the cache; cached cards are rendered once, when fresh.
    static let cacheMarker = "<!--cache-->"
    static let cacheBadge = " <span class=\"cached\">cached</span>"

    /// The end of the page: the filter script.
    static var footer: String {
        """
        </main>
        <footer>Made by CastPrep. Open any card's fixes, apply them, and run <code>castprep preflight</code> again.</footer>
        <script>\(script)</script>
        </body>
        </html>

        """
    }

    /// Text made safe for HTML content and attribute values.
    static func escape(_ text: String) -> String {
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
        *{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
        header,main,footer{max-width:1100px;margin:0 auto;padding:12px 16px}h1{margin:8px 0 4px;font-size:1.5em}
        .catalog,.facts,.common,footer{color:var(--muted)}code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em}
        .totals{display:flex;gap:8px;flex-wrap:wrap;margin:10px 0}.total{border:1px solid currentColor;background:var(--card);border-radius:8px;padding:8px 12px;font:inherit;cursor:pointer}
        .total b{font-size:1.3em;margin-right:4px}.total[aria-pressed=true]{outline:3px solid currentColor}
        .ready{color:var(--ok)}.ready-with-warnings{color:var(--warn)}.blocked{color:var(--bad)}
        .devices{border-collapse:collapse;margin:8px 0}.devices td{white-space:nowrap}.devices th,.devices td{text-align:left;padding:2px 12px 2px 0;font-weight:normal}.devices caption{text-align:left;font-weight:600}
        .filters{display:flex;gap:12px;flex-wrap:wrap;align-items:center;margin:12px 0}.filters input,.filters select{font:inherit;padding:4px 6px}
        main{display:grid;gap:12px;grid-template-columns:repeat(auto-fill,minmax(320px,1fr))}
        .card{background:var(--card);color:var(--ink);border-radius:12px;border-top:6px solid currentColor;overflow:hidden;box-shadow:0 1px 3px #0002}
        .card.ready{border-top-color:var(--ok)}.card.ready-with-warnings{border-top-color:var(--warn)}.card.blocked{border-top-color:var(--bad)}
        .poster{display:block;width:100%;aspect-ratio:16/9;object-fit:cover;background:#000}.poster.none{display:flex;align-items:center;justify-content:center;color:#fff;font-size:2em}
        .body{padding:10px 14px}h2{margin:0 0 4px;font-size:1.1em}.verdict{margin:0 0 6px;font-weight:600}.cached{font-weight:normal;color:var(--muted);font-size:.85em}
        .url{word-break:break-all;margin:4px 0}.type{color:var(--muted)}ul{padding-left:18px;margin:6px 0}
        .device-verdicts{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px}.device-verdicts li{border:1px solid currentColor;border-radius:12px;padding:0 8px;font-size:.82em}
        .device-verdicts li span{color:var(--ink)}.findings li.error{color:var(--bad)}.findings li.warning{color:var(--warn)}.findings li.note{color:var(--muted)}
        .findings li code{color:var(--ink)}pre{white-space:pre-wrap;word-break:break-all;background:var(--bg);padding:6px;border-radius:6px;margin:2px 0}
        [hidden]{display:none!important}
        """

    private static let script = """
        (function(){
          var cards=Array.prototype.slice.call(document.querySelectorAll('.card'));
          var search=document.getElementById('search'),device=document.getElementById('device'),shown=document.getElementById('shown');
          var buttons=Array.prototype.slice.call(document.querySelectorAll('.total'));var wanted=null;
          function apply(){
            var text=search.value.trim().toLowerCase(),dev=device.value,count=0;
            cards.forEach(function(card){
              var ok=(!wanted||card.dataset.readiness===wanted)&&(!text||card.dataset.search.indexOf(text)>=0);
              if(ok&&dev){ok=card.dataset.blockedOn.split(' ').indexOf(dev)<0;}
              card.hidden=!ok;if(ok){count++;}
            });
            shown.textContent=count+' of '+cards.length+' shown';
          }
          buttons.forEach(function(button){button.addEventListener('click',function(){
            wanted=wanted===button.dataset.filter?null:button.dataset.filter;
            buttons.forEach(function(b){b.setAttribute('aria-pressed',String(b.dataset.filter===wanted));});apply();});});
          search.addEventListener('input',apply);device.addEventListener('change',apply);apply();
        })();
        """
}
