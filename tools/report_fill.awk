# report_fill.awk — fills the placeholders of a report template line with values read from the
# data files, so that no number of the report's generated lines is typed by hand.
#
#   awk -v datadir=data -f tools/report_fill.awk < template
#
# A placeholder is {OP FILE [COLUMN] [FILTER ...] [%FORMAT]}, FILE a CSV of datadir:
#   get FILE COL F...       the first matching row's COL       (numbers: %.3g)
#   max|min|sum FILE COL F...   over the matching rows         (numbers: %.3g)
#   count FILE F...         the number of matching rows        (%d)
#   distinct FILE COL F...  the number of distinct COL values  (%d)
#   list FILE COL F...      the distinct COL values, in file order, joined by ", "
#   argmax|argmin FILE COL KEY F...  KEY of the row where COL is largest/smallest
#   median FILE COL F...    the median of COL over the matching rows (numbers: %.3g)
#   meta FILE KEY           the "# KEY: value" provenance line of FILE
# FILTER is COL=V (V may list alternatives a|b), COL!=V, COL>V, COL<V, COL>=V or COL<=V
# (numeric); COL=@max or COL=@min keeps the rows where COL takes its largest or smallest value
# among the rows the other filters keep (so that "at the largest K" needs no typed K). COL of
# list/distinct may join columns with "/" (a/b). Integers print as integers; a %FORMAT last
# overrides the printf format. A placeholder that cannot be
# filled (no file, no column, no matching row) prints "n/a", which the report check refuses.

function isnum(x) { return x ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }

function fmtv(v, f) {
    if (v == "") return "n/a"
    if (f != "") return sprintf(f, v)
    if (isnum(v) && v + 0 == int(v + 0) && v + 0 < 1e15 && v + 0 > -1e15) return sprintf("%d", v + 0)
    if (isnum(v)) return sprintf("%.3g", v)
    return v
}

# Does row (fields in R[], header in C[]) pass filter string flt?
function pass(flt,    op, k, v, p, a, n, i, x) {
    if (match(flt, /(!=|>=|<=|=|>|<)/)) {
        op = substr(flt, RSTART, RLENGTH); k = substr(flt, 1, RSTART - 1); v = substr(flt, RSTART + RLENGTH)
    } else return 0
    if (!(k in C)) { bad = 1; return 0 }
    x = R[C[k]]
    if (op == "=") { n = split(v, a, "|"); for (i = 1; i <= n; i++) if (x == a[i]) return 1; return 0 }
    if (op == "!=") return x != v
    if (!isnum(x) || x ~ /nan/) return 0
    if (op == ">") return x + 0 > v + 0
    if (op == "<") return x + 0 < v + 0
    if (op == ">=") return x + 0 >= v + 0
    return x + 0 <= v + 0
}

# Splits a CSV line into R[] (quoted fields may hold commas); returns the field count.
function splitcsv(line,    n, c, q, i, ch, cur) {
    delete R
    if (index(line, "\"") == 0) return split(line, R, ",")   # no quoted field: the fast path
    n = 0; cur = ""; q = 0
    for (i = 1; i <= length(line); i++) {
        ch = substr(line, i, 1)
        if (q) { if (ch == "\"") { if (substr(line, i + 1, 1) == "\"") { cur = cur "\""; i++ } else q = 0 } else cur = cur ch }
        else if (ch == "\"") q = 1
        else if (ch == ",") { R[++n] = cur; cur = "" }
        else cur = cur ch
    }
    R[++n] = cur
    return n
}

# The value of column spec c in the current row: a column, or columns joined with "/".
function colv(c,    n, a, i, v) {
    if (c in C) return R[C[c]]
    n = split(c, a, "/"); v = ""
    for (i = 1; i <= n; i++) { if (!(a[i] in C)) return ""; v = v (i > 1 ? "/" : "") R[C[a[i]]] }
    return v
}

function hascol(c,    n, a, i) {
    if (c in C) return 1
    n = split(c, a, "/")
    for (i = 1; i <= n; i++) if (!(a[i] in C)) return 0
    return 1
}

# Resolves COL=@max / COL=@min filters of F[1..nflt] into COL=value by a first pass over path.
function resolve(path, nflt,    i, j, k, ext, line, nf, ok, x, best, hdr, other) {
    for (i = 1; i <= nflt; i++) {
        if (F[i] !~ /=@(max|min)$/) continue
        k = substr(F[i], 1, index(F[i], "=") - 1); ext = substr(F[i], index(F[i], "@") + 1)
        best = ""; hdr = 0
        while ((getline line < path) > 0) {
            if (line ~ /^#/) continue
            nf = splitcsv(line)
            if (!hdr) { delete C; for (j = 1; j <= nf; j++) C[R[j]] = j; hdr = 1; continue }
            ok = 1
            for (j = 1; j <= nflt && ok; j++) if (j != i && F[j] !~ /=@(max|min)$/ && !pass(F[j])) ok = 0
            if (!ok || !(k in C)) continue
            x = R[C[k]]
            if (!isnum(x)) continue
            if (best == "" || (ext == "max" ? x + 0 > best + 0 : x + 0 < best + 0)) best = x
        }
        close(path)
        if (best == "") return 0
        F[i] = k "=" best
    }
    return 1
}

function evalph(ph,    w, nw, op, file, path, col, key, fmt, nf, first, i, j, line, hdr, ok, val, best, bkey, cnt, sum, seen, out, nflt) {
    nw = split(ph, w, " ")
    op = w[1]; file = w[2]; path = datadir "/" file
    fmt = ""
    if (nw >= 3 && w[nw] ~ /^%/) { fmt = w[nw]; nw-- }
    if (op == "meta") {
        val = ""
        while ((getline line < path) > 0) {
            if (index(line, "# " w[3] ": ") == 1) { val = substr(line, length(w[3]) + 5); break }
            if (line !~ /^#/) break
        }
        close(path)
        return fmtv(val, fmt)
    }
    first = 3; col = ""; key = ""
    if (op != "count") { col = w[3]; first = 4 }
    if (op == "argmax" || op == "argmin") { key = w[4]; first = 5 }
    nflt = 0
    delete F
    for (i = first; i <= nw; i++) F[++nflt] = w[i]
    if (!resolve(path, nflt)) return "n/a"
    delete vals; nv = 0
    hdr = 0; cnt = 0; sum = 0; best = ""; bkey = ""; val = ""; out = ""; bad = 0
    delete seen
    while ((getline line < path) > 0) {
        if (line ~ /^#/) continue
        nf = splitcsv(line)
        if (!hdr) { delete C; for (j = 1; j <= nf; j++) C[R[j]] = j; hdr = 1
            if (col != "" && !hascol(col)) { close(path); return "n/a" }
            if (key != "" && !(key in C)) { close(path); return "n/a" }
            continue }
        ok = 1
        for (i = 1; i <= nflt && ok; i++) if (!pass(F[i])) ok = 0
        if (bad) { close(path); return "n/a" }
        if (!ok) continue
        cnt++
        if (col == "") continue
        x = colv(col)
        if (op == "get") { val = x; break }
        if (op == "median") { if (isnum(x) && x !~ /nan|inf/) vals[++nv] = x + 0; continue }
        if (op == "distinct" || op == "list") { if (!(x in seen)) { seen[x] = 1; val++; out = out (out == "" ? "" : ", ") x } continue }
        if (!isnum(x) || x ~ /nan|inf/) continue
        if (op == "sum") { sum += x; val = sum }
        else if ((op == "max" || op == "argmax") && (best == "" || x + 0 > best + 0)) { best = x; bkey = (key != "" ? R[C[key]] : "") }
        else if ((op == "min" || op == "argmin") && (best == "" || x + 0 < best + 0)) { best = x; bkey = (key != "" ? R[C[key]] : "") }
    }
    close(path)
    if (!hdr) return "n/a"
    if (op == "count") return fmtv(cnt, fmt == "" ? "%d" : fmt)
    if (op == "distinct") return fmtv(val + 0, fmt == "" ? "%d" : fmt)
    if (op == "list") return out == "" ? "none" : out
    if (op == "max" || op == "min") return fmtv(best, fmt)
    if (op == "argmax" || op == "argmin") return fmtv(bkey, fmt)
    if (op == "sum") return cnt ? fmtv(sum, fmt) : "n/a"
    if (op == "get") return fmtv(val, fmt)
    if (op == "median") {
        if (nv == 0) return "n/a"
        for (i = 2; i <= nv; i++) { x = vals[i]; for (j = i - 1; j >= 1 && vals[j] > x; j--) vals[j + 1] = vals[j]; vals[j + 1] = x }
        return fmtv(nv % 2 ? vals[(nv + 1) / 2] : (vals[nv / 2] + vals[nv / 2 + 1]) / 2, fmt)
    }
    return "n/a"
}

{
    s = $0; res = ""
    while (match(s, /\{[a-z]+ [^{}]*\}/)) {
        st = RSTART; ln = RLENGTH   # evalph's own match() calls move RSTART
        res = res substr(s, 1, st - 1) evalph(substr(s, st + 1, ln - 2))
        s = substr(s, st + ln)
    }
    print res s
}
