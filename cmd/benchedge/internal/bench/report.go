package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ratios fills the goal ratios of issue 13 from the medians.
func ratios(rep *EdgeReport, sums map[string]*Summary) {
	ratio := func(name, x, y string) {
		if sums[x] != nil && sums[y] != nil && sums[y].MedianRPS > 0 {
			rep.Ratios[name] = round(sums[x].MedianRPS/sums[y].MedianRPS, 2)
		}
	}
	ratio("d/b", "d", "b")
	ratio("d/c", "d", "c")
	ratio("d/a", "d", "a")
	ratio("d0/b", "d0", "b")
	ratio("b/a", "b", "a")
	ratio("d/e", "d", "e")
	cpu := func(name, x, y string) {
		if sums[x] != nil && sums[y] != nil && sums[y].MedianCPUus > 0 {
			rep.Ratios[name] = round(sums[x].MedianCPUus/sums[y].MedianCPUus, 2)
		}
	}
	cpu("cpu e/d", "e", "d")
	cpu("cpu d/b", "d", "b")
	cpu("cpu dd/d", "dd", "d")
	if d, dd := sums["d"], sums["dd"]; d != nil && dd != nil && d.CreateOrderCPUus > 0 {
		rep.Ratios["cpu dd/d CreateOrder"] = round(dd.CreateOrderCPUus/d.CreateOrderCPUus, 2)
	}
	if d := sums["d"]; d != nil && d.IdleConnKiB != 0 {
		rep.Ratios["idleConnKiB(d)"] = d.IdleConnKiB
	}
	if rep.IdleFloorKiB != 0 {
		rep.Ratios["idleConnKiB(net/http)"] = rep.IdleFloorKiB
	}
	if d, b := sums["d"], sums["b"]; d != nil && b != nil {
		rep.Ratios["addedSerialP50us(d-b)"] = round(d.SerialP50us-b.SerialP50us, 0)
		rep.Ratios["addedSerialP99us(d-b)"] = round(d.SerialP99us-b.SerialP99us, 0)
	}
}

func writeCompareTable(w io.Writer, rep EdgeReport) {
	fmt.Fprintf(w, "%s; %s; closed loop %d rounds of %.0fs, c=64\n\n", rep.Machine, rep.Date, len(rep.Rounds)/max(len(rep.Systems), 1), rep.RoundSeconds)
	fmt.Fprintln(w, "| system | rps per round | median rps | vs stock | CPU µs/req | serial p50/p99 µs | open loop p50/p99 ms (rate) | equivalent |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var stock float64
	for _, s := range rep.Systems {
		if s.Key == "b" {
			stock = s.MedianRPS
		}
	}
	for _, s := range rep.Systems {
		var rps []string
		for _, rd := range rep.Rounds {
			if rd.System == s.Key {
				mark := ""
				if !rd.Valid {
					mark = "*"
				}
				rps = append(rps, fmt.Sprintf("%.0f%s", rd.RPS, mark))
			}
		}
		eq := "yes"
		if !s.Equivalent {
			eq = "NO: " + s.EquivNote
		}
		fmt.Fprintf(w, "| (%s) %s | %s | %.0f | %.2f | %.1f | %.0f / %.0f | %.2f / %.2f (%d/s, %d non-2xx) | %s |\n",
			s.Key, s.Name, strings.Join(rps, ", "), s.MedianRPS, s.MedianRPS/max(stock, 1), s.MedianCPUus,
			s.SerialP50us, s.SerialP99us, s.OpenP50ms, s.OpenP99ms, s.OpenRate, s.OpenNon2xx, eq)
	}
	fmt.Fprintln(w)
	for _, k := range []string{"d/b", "d/c", "d/a", "d0/b", "b/a", "d/e", "cpu e/d", "cpu d/b", "cpu dd/d", "cpu dd/d CreateOrder", "addedSerialP50us(d-b)", "addedSerialP99us(d-b)", "idleConnKiB(d)", "idleConnKiB(net/http)"} {
		if v, ok := rep.Ratios[k]; ok {
			fmt.Fprintf(w, "- %s: %g\n", k, v)
		}
	}
	writeSerialRounds(w, rep)
	for _, s := range rep.Systems {
		if s.CreateOrderCPUus != 0 {
			fmt.Fprintf(w, "- (%s) CPU µs per POST /api/orders (CreateOrder): %.1f\n", s.Key, s.CreateOrderCPUus)
		}
	}
	fmt.Fprintln(w, "\nRSS per idle keep-alive HTTP/1.1 connection (KiB, growth over the -idle connections):")
	for _, s := range rep.Systems {
		if s.IdleConnKiB != 0 {
			fmt.Fprintf(w, "- (%s): %.1f\n", s.Key, s.IdleConnKiB)
		}
	}
	if rep.IdleFloorKiB != 0 {
		fmt.Fprintf(w, "- (net/http alone): %.1f\n", rep.IdleFloorKiB)
	}
	var invalid []string
	for _, rd := range rep.Rounds {
		if !rd.Valid {
			invalid = append(invalid, fmt.Sprintf("(%s) round %d: %s", rd.System, rd.Round, rd.Why))
		}
	}
	if len(invalid) > 0 {
		fmt.Fprintln(w, "\n\\* rounds that failed a validity gate (kept in the figures):")
		for _, s := range invalid {
			fmt.Fprintln(w, "- "+s)
		}
	}
}

// writeCompareFiles writes prefix.json, prefix.md and prefix.svg.
func writeCompareFiles(prefix string, rep EdgeReport) error {
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(prefix+".json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	writeCompareTable(&md, rep)
	if err := os.WriteFile(prefix+".md", []byte(md.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(prefix+".svg", []byte(chart(rep)), 0o644)
}

// chart draws the median closed-loop throughput per system as an SVG bar
// chart, each round as a dot.
func chart(rep EdgeReport) string {
	const w, barH, gap, left = 720, 28, 12, 290
	h := 50 + len(rep.Systems)*(barH+gap)
	top := 1.0
	for _, rd := range rep.Rounds {
		top = max(top, rd.RPS)
	}
	scale := float64(w-left-60) / top
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="13">`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="10" y="20" font-weight="bold">GET /api/inventory/{sku}: requests/s per core, closed loop c=64 (%s)</text>`+"\n", html.EscapeString(rep.Date))
	for i, s := range rep.Systems {
		y := 36 + i*(barH+gap)
		fmt.Fprintf(&b, `<text x="10" y="%d">(%s) %s</text>`+"\n", y+barH/2+4, s.Key, html.EscapeString(s.Name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%d" fill="#4a7ab5"/>`+"\n", left, y, s.MedianRPS*scale, barH)
		fmt.Fprintf(&b, `<text x="%.0f" y="%d">%.0f</text>`+"\n", float64(left)+s.MedianRPS*scale+6, y+barH/2+4, s.MedianRPS)
		for _, rd := range rep.Rounds {
			if rd.System == s.Key {
				fmt.Fprintf(&b, `<circle cx="%.0f" cy="%d" r="3" fill="#d9534f"/>`+"\n", float64(left)+rd.RPS*scale, y+barH/2)
			}
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// writeSerialRounds lists each system's serial p50 per interleaved round.
func writeSerialRounds(w io.Writer, rep EdgeReport) {
	fmt.Fprintln(w, "\nSerial p50 per interleaved round (µs; the table pools the rounds' samples):")
	for _, s := range rep.Systems {
		var ps []string
		for _, p := range s.SerialRoundP50us {
			ps = append(ps, fmt.Sprintf("%.0f", p))
		}
		fmt.Fprintf(w, "- (%s): %s\n", s.Key, strings.Join(ps, ", "))
	}
}
