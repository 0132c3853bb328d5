// Preloaded (`node -r`) into a CLI call by the benches: on exit, writes the process's peak RSS in
// MB to the file named by BENCH_MAX_RSS_FILE, so a bench can measure the real `baton` command.
const { writeFileSync } = require("node:fs")
const { peakRssMb } = require("./peak-rss.cjs")

process.on("exit", () => {
  const file = process.env.BENCH_MAX_RSS_FILE
  if (file) writeFileSync(file, String(peakRssMb()))
})
