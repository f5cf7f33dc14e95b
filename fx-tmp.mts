import { readdirSync, readFileSync } from 'node:fs';
import { maskNumbersInText } from './functions/core/recipients/mask-text';
const root = 'test/fixtures';
let changed = 0, total = 0;
for (const dir of readdirSync(root)) for (const f of readdirSync(`${root}/${dir}`)) {
  const t = readFileSync(`${root}/${dir}/${f}`, 'utf8'); total++;
  if (maskNumbersInText(t) !== t) changed++;
}
console.log({ changed, total });
const big = JSON.stringify(Array.from({ length: 4000 }, (_, i) => ({ id: 820982911946154508n.toString() + i, amount: 150000 + i, at: new Date(1.7e12 + i * 1000).toISOString(), phone: '0712 345 678', note: 'x'.repeat(20) })));
for (const [name, text] of [['mixed (4000 phones)', big], ['all digits 7', big.replace(/\d/g, '7')], ['numbers array', JSON.stringify(Array.from({length: 60000}, (_, i) => i))], ['space-separated digits', Array.from({length: 100000}, (_, i) => i % 10).join(' ')], ['github push fixture', readFileSync('test/fixtures/github/push.json','utf8')]] as const) {
  const t0 = performance.now(); maskNumbersInText(text); console.log(name, text.length, 'chars:', Math.round(performance.now() - t0), 'ms');
}
