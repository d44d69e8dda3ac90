#!/usr/bin/env python3
"""pane_vs_model.py CAPTURE X Y MODEL_JSON: the console's pane against the
model (issue 22), for tests/e2e/attach_fidelity.sh.

CAPTURE is `tmux capture-pane -e -p` of the console's window; the pane is
its rectangle at column X, row Y, of the model's size. MODEL_JSON is
`corral screen ID --json` of the same moment. Every cell must show the
model's text, bold, faint, italic, underline, blink and reverse; a
default colour must stay default and an indexed one the same index; a
24-bit one may be drawn as any indexed colour (a 256-colour terminal has
no other). What the console draws otherwise on purpose: concealed text
as blanks, strikethrough not at all (curses has no such attribute), every
underline style as a single underline. A blank's background is not
compared when tmux's capture shows none, nor its foreground (which a
plain blank does not show): the console may draw a run of blanks with an
erase, and capture-pane does not write out the background of erased
cells. Prints each difference (the first few) and exits 1 if
there is one.
"""
import json
import re
import sys
import unicodedata

BOLD, ULINE, ITALIC, BLINK, REVERSE, STRIKE, CONCEAL, FAINT = (
    0x1, 0x6, 0x8, 0x10, 0x20, 0x40, 0x80, 0x100)
SGR_ON = {1: BOLD, 2: FAINT, 3: ITALIC, 4: ULINE, 5: BLINK, 7: REVERSE,
          8: CONCEAL, 9: STRIKE}
SGR_OFF = {22: BOLD | FAINT, 23: ITALIC, 24: ULINE, 25: BLINK, 27: REVERSE,
           28: CONCEAL, 29: STRIKE}
ACS = {'q': '─', 'x': '│', 'l': '┌', 'k': '┐', 'm': '└', 'j': '┘',
       't': '├', 'u': '┤', 'w': '┬', 'v': '┴', 'n': '┼', 'a': '▒',
       '`': '◆', '~': '·', 'o': '⎺', 's': '⎽', '0': '█'}


def width(ch):
    if unicodedata.combining(ch) or unicodedata.category(ch) in ('Mn', 'Me'):
        return 0
    if ch == '\u200d' or '\ufe00' <= ch <= '\ufe0f':
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ('W', 'F') else 1


class Pen:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = ('d',)
        self.bg = ('d',)
        self.attrs = 0

    def sgr(self, params):
        ps = params.split(';') if params else ['0']
        i = 0
        while i < len(ps):
            sub = ps[i].split(':')
            n = int(sub[0]) if sub[0] else 0
            if n == 0:
                self.reset()
            elif n == 4 and len(sub) > 1 and sub[1] == '0':
                self.attrs &= ~ULINE
            elif n in SGR_ON:
                self.attrs |= SGR_ON[n]
            elif n in SGR_OFF:
                self.attrs &= ~SGR_OFF[n]
            elif 30 <= n <= 37 or 90 <= n <= 97:
                self.fg = ('i', n % 10 + (8 if n >= 90 else 0))
            elif 40 <= n <= 47 or 100 <= n <= 107:
                self.bg = ('i', n % 10 + (8 if n >= 100 else 0))
            elif n in (39, 49):
                self.fg, self.bg = ((('d',), self.bg) if n == 39 else
                                    (self.fg, ('d',)))
            elif n in (38, 48):
                c, i = extended_color(ps, i)
                self.fg, self.bg = ((c, self.bg) if n == 38 else
                                    (self.fg, c))
            i += 1


def extended_color(ps, i):
    """SGR 38/48 at ps[i]: the colour and the index of its last field."""
    if i + 2 < len(ps) and ps[i + 1] == '5':
        return ('i', int(ps[i + 2])), i + 2
    if i + 4 < len(ps) and ps[i + 1] == '2':
        return ('rgb',) + tuple(int(x) for x in ps[i + 2:i + 5]), i + 4
    return ('d',), i


def parse_capture(text, x0, y0, rows, cols):
    """The pane's cells: (text, fg, bg, attrs) per column, '' for blanks."""
    grid = []
    lines = text.split('\n')
    for y in range(rows):
        line = lines[y0 + y] if y0 + y < len(lines) else ''
        pen, acs, col, last = Pen(), False, 0, None
        cells = {}
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == '\x1b':
                m = re.match(r'\x1b\[([0-9;:]*)m', line[i:])
                if m:
                    pen.sgr(m.group(1))
                    i += len(m.group(0))
                    continue
                i += 1
                continue
            if ch == '\x0e':
                acs = True
            elif ch == '\x0f':
                acs = False
            else:
                if acs and ch in ACS:
                    ch = ACS[ch]
                w = width(ch)
                if w == 0 and last is not None:
                    t, fg, bg, a = cells[last]
                    cells[last] = (t + ch, fg, bg, a)
                else:
                    cells[col] = (ch, pen.fg, pen.bg, pen.attrs)
                    last = col
                    col += max(w, 1)
            i += 1
        row = []
        for x in range(cols):
            row.append(cells.get(x0 + x, ('', ('d',), ('d',), 0)))
        grid.append(row)
    return grid


def model_color(c):
    kind = c >> 24
    if kind == 0:
        return ('d',)
    if kind == 1:
        return ('i', c & 0xff)
    return ('rgb', (c >> 16) & 0xff, (c >> 8) & 0xff, c & 0xff)


def model_cells(m):
    grid = []
    for r in m['lines']:
        row, last = [], None
        for ch in r['text']:
            w = width(ch)
            if w == 0 and last is not None:
                row[last] += ch
                continue
            last = len(row)
            row.append(ch)
            if w == 2:
                row.append('')
        row = row[:m['cols']]
        row += [''] * (m['cols'] - len(row))
        look = [(('d',), ('d',), 0)] * m['cols']
        for run in r['runs']:
            for x in range(run['col'], min(run['col'] + run['len'],
                                           m['cols'])):
                look[x] = (model_color(run['fg']), model_color(run['bg']),
                           run['attrs'])
        grid.append(list(zip(row, look)))
    return grid


def same_color(mine, theirs):
    if mine[0] == 'rgb':
        return theirs[0] in ('i', 'rgb')
    return mine == theirs


def main():
    cap = open(sys.argv[1], encoding='utf-8', errors='replace').read()
    x0, y0 = int(sys.argv[2]), int(sys.argv[3])
    m = json.load(open(sys.argv[4]))
    rows, cols = m['rows'], m['cols']
    pane = parse_capture(cap, x0, y0, rows, cols)
    model = model_cells(m)
    diffs = []
    for y in range(rows):
        for x in range(cols):
            text, (fg, bg, attrs) = model[y][x]
            ptext, pfg, pbg, pattrs = pane[y][x]
            if text == ' ':
                text = ''
            if ptext == ' ':
                ptext = ''
            if attrs & CONCEAL:
                text = ''
            want = attrs & ~(STRIKE | CONCEAL)
            if want & ULINE:
                want = (want & ~ULINE) | 0x2
            got = pattrs & ~(STRIKE | CONCEAL)
            if got & ULINE:
                got = (got & ~ULINE) | 0x2
            what = []
            if text != ptext:
                what.append('text %r/%r' % (text, ptext))
            if want != got:
                what.append('attrs %04x/%04x' % (want, got))
            # A blank the console drew with an erase (curses does, for a
            # run of blanks) is a cleared cell in tmux, whose background
            # capture-pane does not write out (as in pty/tmuxdiff); its
            # foreground, which a blank does not show, is gone (a reverse
            # or underlined blank shows it, and differs in attrs here).
            erased = text == '' and ptext == '' and pbg == ('d',)
            if not same_color(fg, pfg) and not (erased and pfg == ('d',)
                                                and got == 0):
                what.append('fg %s/%s' % (fg, pfg))
            if not same_color(bg, pbg) and not erased:
                what.append('bg %s/%s' % (bg, pbg))
            if what:
                diffs.append('  %d,%d %s' % (y, x, ' '.join(what)))
    if diffs:
        print('%d cells differ (model/console):' % len(diffs))
        print('\n'.join(diffs[:8]))
        sys.exit(1)


main()
