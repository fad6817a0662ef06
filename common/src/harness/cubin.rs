//! A CUBIN's sections (an ELF file's), and the machine code among them: what decides whether two
//! compiles of a kernel run the same code (`cargo xtask rehash`, the grader's check of a
//! submission's compile).

/// One section of a CUBIN (an ELF file): its name, type, flags and bytes (its size where it
/// holds none, as `.nv.shared.*` does).
#[derive(Debug, PartialEq, Eq)]
pub struct Section<'a> {
    pub name: &'a str,
    pub kind: u32,
    pub flags: u64,
    pub bytes: &'a [u8],
    pub size: u64,
}

/// The sections of a CUBIN that the GPU runs or reads, in file order: every section but the
/// debug information (`.debug_*`, `.nv_debug_*` and their relocations). The line tables are
/// there, so an edit that only moves lines (a comment in a shared header) changes the CUBIN but
/// not these. An error where the bytes are not a 64-bit little-endian ELF file.
pub fn machine_code(cubin: &[u8]) -> std::result::Result<Vec<Section<'_>>, String> {
    const NOBITS: u32 = 8;
    let bad = |what: &str| format!("not a CUBIN ({what})");
    let at = |off: usize, len: usize| off.checked_add(len).and_then(|end| cubin.get(off..end)).ok_or(());
    let u16_at = |off: usize| at(off, 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |off: usize| at(off, 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()));
    let u64_at = |off: usize| at(off, 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()));
    if cubin.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        return Err(bad("no 64-bit little-endian ELF header"));
    }
    let header = || -> std::result::Result<_, ()> {
        Ok((usize::try_from(u64_at(0x28)?).map_err(|_| ())?, u16_at(0x3a)?, u16_at(0x3c)?, u16_at(0x3e)?))
    };
    let (table, entry, count, names_index) = header().map_err(|_| bad("a short ELF header"))?;
    let field = |i: usize, off: usize| table.checked_add(i.checked_mul(entry)?)?.checked_add(off);
    let raw = |i: usize| -> std::result::Result<(u32, u32, u64, u64, u64), ()> {
        let f = |off| field(i, off).ok_or(());
        Ok((u32_at(f(0)?)?, u32_at(f(4)?)?, u64_at(f(8)?)?, u64_at(f(0x18)?)?, u64_at(f(0x20)?)?))
    };
    let bytes = |kind: u32, offset: u64, size: u64| -> std::result::Result<&[u8], ()> {
        if kind == NOBITS {
            return Ok(&[]);
        }
        at(usize::try_from(offset).map_err(|_| ())?, usize::try_from(size).map_err(|_| ())?)
    };
    let (_, names_kind, _, names_offset, names_size) = raw(names_index).map_err(|_| bad("no section names"))?;
    let names = bytes(names_kind, names_offset, names_size).map_err(|_| bad("section names past the end"))?;
    let mut out = Vec::new();
    for i in 0..count {
        let (name, kind, flags, offset, size) = raw(i).map_err(|_| bad("a section header past the end"))?;
        let name = names
            .get(name as usize..)
            .and_then(|n| n.split(|&b| b == 0).next())
            .and_then(|n| std::str::from_utf8(n).ok())
            .ok_or_else(|| bad("a section name past the end"))?;
        let plain = name.strip_prefix(".rela").or_else(|| name.strip_prefix(".rel")).unwrap_or(name);
        if plain.starts_with(".debug_") || plain.starts_with(".nv_debug_") {
            continue;
        }
        let bytes = bytes(kind, offset, size).map_err(|_| bad("a section past the end"))?;
        out.push(Section { name, kind, flags, bytes, size });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-bit ELF file with the named sections (each of type 1 holding its bytes), the section
    /// names last.
    fn elf(sections: &[(&str, &[u8])]) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut name_at = Vec::new();
        for (n, _) in sections.iter().chain([(".shstrtab", &[][..])].iter()) {
            name_at.push(names.len() as u32);
            names.extend_from_slice(n.as_bytes());
            names.push(0);
        }
        let mut out = vec![0u8; 64];
        out[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let mut placed = Vec::new();
        for (_, b) in sections.iter().chain([("", &names[..])].iter()) {
            placed.push((out.len() as u64, b.len() as u64));
            out.extend_from_slice(b);
        }
        let table = out.len() as u64;
        out.extend_from_slice(&[0u8; 64]); // section 0, the null section
        for (i, (offset, size)) in placed.iter().enumerate() {
            let mut h = [0u8; 64];
            h[..4].copy_from_slice(&name_at[i].to_le_bytes());
            h[4..8].copy_from_slice(&(if i == sections.len() { 3u32 } else { 1 }).to_le_bytes());
            h[0x18..0x20].copy_from_slice(&offset.to_le_bytes());
            h[0x20..0x28].copy_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&h);
        }
        out[0x28..0x30].copy_from_slice(&table.to_le_bytes());
        out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        out[0x3c..0x3e].copy_from_slice(&(placed.len() as u16 + 1).to_le_bytes());
        out[0x3e..0x40].copy_from_slice(&(placed.len() as u16).to_le_bytes());
        out
    }

    #[test]
    fn machine_code_sets_the_line_tables_aside() {
        let a = elf(&[(".debug_line", b"line 61"), (".text.sgemm", b"code"), (".rela.debug_line", b"r")]);
        let moved = elf(&[(".debug_line", b"line 64, longer"), (".text.sgemm", b"code"), (".rela.debug_line", b"s")]);
        let other = elf(&[(".debug_line", b"line 61"), (".text.sgemm", b"kode"), (".rela.debug_line", b"r")]);
        assert_ne!(a, moved);
        let (a, moved, other) =
            (machine_code(&a).unwrap(), machine_code(&moved).unwrap(), machine_code(&other).unwrap());
        let names: Vec<&str> = a.iter().map(|s| s.name).collect();
        assert_eq!(names, ["", ".text.sgemm", ".shstrtab"]);
        assert_eq!(a, moved);
        assert_ne!(a, other);
        assert!(machine_code(b"\x7fELF\x02\x01 too short").unwrap_err().contains("not a CUBIN"));
        assert!(machine_code(b"MZ").unwrap_err().contains("not a CUBIN"));
    }
}
