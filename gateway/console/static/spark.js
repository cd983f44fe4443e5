// sparkline draws points' field as an inline SVG polyline, and the
// previous points (the same minutes earlier, shifted by offsetSec) in
// grey behind it, on one scale. The x axis spans spanSec, or less while
// the process is younger (at least a minute), so a new trend fills it.
const NS = 'http://www.w3.org/2000/svg';
const W = 120;
const H = 28;

export function sparkline(recent, previous, field, offsetSec, spanSec, label) {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('width', W);
  svg.setAttribute('height', H);
  svg.setAttribute('class', 'spark');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.dataset.points = recent.length;
  svg.dataset.last = recent.length ? recent[recent.length - 1][field] : 0;
  const now = Date.now() / 1000;
  if (recent.length > 0) spanSec = Math.min(spanSec, Math.max(60, now - recent[0].t + 10));
  const all = recent.concat(previous);
  const top = Math.max(1e-9, ...all.map((p) => p[field]));
  const line = (pts, shift, cls) => {
    if (pts.length === 0) return;
    const xy = pts.map((p) => {
      const x = W * (1 - (now - (p.t + shift)) / spanSec);
      const y = H - 1 - (H - 2) * (p[field] / top);
      return `${Math.max(0, x).toFixed(1)},${y.toFixed(1)}`;
    });
    const pl = document.createElementNS(NS, 'polyline');
    pl.setAttribute('points', xy.join(' '));
    pl.setAttribute('class', cls);
    svg.appendChild(pl);
  };
  line(previous, offsetSec, 'prev');
  line(recent, 0, 'now');
  return svg;
}
