export interface Row {
  name: string;
  p50: number;
  p99?: number;
  unit: string;
  note?: string;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

export function printTable(title: string, rows: Row[]): void {
  const fmt = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? "-" : v >= 100 ? v.toFixed(0) : v.toFixed(2));
  const lines = [`## ${title}`, "", "| measurement | p50 | p99 | unit | note |", "|---|---|---|---|---|"];
  for (const r of rows) lines.push(`| ${r.name} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.unit} | ${r.note ?? ""} |`);
  console.log(lines.join("\n") + "\n");
}
