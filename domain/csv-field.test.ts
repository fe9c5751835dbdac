import { describe, expect, it } from 'vitest';
import { csvField, csvFile, csvRow, csvText } from './csv-field.ts';

describe('csvField', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\r\nlines', '"two\r\nlines"'],
    ['line\nfeed', '"line\nfeed"'],
    ['', ''],
  ])('%j → %j', (text, expected) => {
    expect(csvField(text)).toBe(expected);
  });
});

describe('csvText', () => {
  it.each([
    ['=HYPERLINK("http://x","y")', `"'=HYPERLINK(""http://x"",""y"")"`],
    ['+1+1', "'+1+1"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tTab', "'\tTab"],
    ['Truck = 12', 'Truck = 12'],
    ["O'Brien", "O'Brien"],
  ])('%j → %j', (text, expected) => {
    expect(csvText(text)).toBe(expected);
  });
});

describe('csvRow and csvFile', () => {
  it('writes numbers as numbers, null as empty, text guarded, CRLF after each line', () => {
    expect(csvRow(['=cmd', -12.5, 0, null, true, 'a,b'])).toBe(`'=cmd,-12.5,0,,true,"a,b"\r\n`);
    expect(csvFile(['x', 'y'], [[1, 'a'], [2, null]])).toBe('x,y\r\n1,a\r\n2,\r\n');
    expect(csvFile(['x'], [])).toBe('x\r\n');
  });
});
