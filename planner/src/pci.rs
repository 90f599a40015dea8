//! PCI bus ids: the one rule for the `pci_bus` of the inventory's GPUs,
//! NICs and PCIe switches, and for the plan that carries them.
//!
//! NCCL matches the devices of a topology file (`NCCL_TOPO_FILE`) to the
//! machine's by comparing bus id strings: it writes the bus id of the GPU
//! it runs on with `"%04lx:%02lx:%02lx.%01lx"` (NCCL v2.30.7-1,
//! `src/misc/utils.cc`, `int64ToBusId`) and looks the file's `<pci busid>`
//! up with `strcmp` (`src/graph/xml.h`, `xmlFindTagKv`). So a bus id here is
//! exactly that form: four hexadecimal digits of domain, two of bus, two of
//! device, one of function, lowercase (`0000:0b:00.0`, what `lspci -D`
//! prints). Shorter or upper-case forms would be read but never match, so
//! they are refused with the form to write instead.

/// What a bus id looks like, for messages.
pub const FORM: &str =
    "domain:bus:device.function in lowercase hexadecimal, e.g. 0000:0b:00.0 (`lspci -D` prints it)";

/// Checks a bus id; the error says what is wrong and, where one exists,
/// the form NCCL would match.
pub fn check_bus_id(s: &str) -> Result<(), String> {
    let parts: Vec<&str> = s.split([':', '.']).collect();
    let hex = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_hexdigit());
    let shape_ok = |p: &[&str]| p.iter().all(|x| hex(x));
    let seps: Vec<char> = s.chars().filter(|c| *c == ':' || *c == '.').collect();
    // `0b:00.0` (lspci without -D) and `00000000:0B:00.0` (nvidia-smi):
    // name the form NCCL matches.
    let suggestion = match (parts.as_slice(), seps.as_slice()) {
        ([b, d, f], [':', '.'])
            if shape_ok(&parts) && b.len() == 2 && d.len() == 2 && f.len() == 1 =>
        {
            Some(format!("0000:{}", s.to_ascii_lowercase()))
        }
        ([dom, b, d, f], [':', ':', '.'])
            if shape_ok(&parts)
                && dom.len() == 8
                && dom.starts_with("0000")
                && b.len() == 2
                && d.len() == 2
                && f.len() == 1 =>
        {
            Some(format!("{}:{b}:{d}.{f}", &dom[4..]).to_ascii_lowercase())
        }
        _ => None,
    };
    let exact = matches!(
        (parts.as_slice(), seps.as_slice()),
        ([dom, b, d, f], [':', ':', '.'])
            if shape_ok(&parts) && dom.len() == 4 && b.len() == 2 && d.len() == 2 && f.len() == 1
    );
    if exact && s.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(format!(
            "bus id `{s}` has upper-case digits: NCCL compares bus ids as lowercase text; write `{}`",
            s.to_ascii_lowercase()
        ));
    }
    if !exact {
        return Err(match suggestion {
            Some(fix) => format!(
                "bus id `{}` is not in the form NCCL matches; write `{fix}`",
                crate::names::escape(s)
            ),
            None => format!("bus id `{}` is not {FORM}", crate::names::escape(s)),
        });
    }
    // Linux prints a function's address as slot.function: the device (slot)
    // is 5 bits and the function 3 bits of the devfn byte.
    let device = u8::from_str_radix(parts[2], 16).unwrap_or(u8::MAX);
    let function = u8::from_str_radix(parts[3], 16).unwrap_or(u8::MAX);
    if device > 0x1f {
        return Err(format!(
            "bus id `{s}` has device {:02x}: a PCI device number is 00 to 1f",
            device
        ));
    }
    if function > 7 {
        return Err(format!(
            "bus id `{s}` has function {function:x}: a PCI function number is 0 to 7"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_bus_id;

    fn check(input: &str, want: Result<(), &str>) {
        match (check_bus_id(input), want) {
            (Ok(()), Ok(())) => {}
            (Err(e), Err(w)) => assert!(e.contains(w), "`{input}`: `{e}` lacks `{w}`"),
            (got, want) => panic!("`{input}`: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn bus_ids() {
        check("0000:0b:00.0", Ok(()));
        check("0001:00:00.0", Ok(()));
        check("ffff:ff:1f.7", Ok(()));
        check("0b:00.0", Err("write `0000:0b:00.0`"));
        check("0B:00.0", Err("write `0000:0b:00.0`"));
        check("00000000:0B:00.0", Err("write `0000:0b:00.0`"));
        check("0000:0B:00.0", Err("upper-case digits: NCCL compares"));
        check("0000:0b:20.0", Err("device 20"));
        check("0000:0b:00.8", Err("function 8"));
        check("0000:0b:00", Err("is not domain:bus:device.function"));
        check("0000-0b-00.0", Err("is not domain:bus:device.function"));
        check("", Err("is not domain:bus:device.function"));
        check("0000:0g:00.0", Err("is not domain:bus:device.function"));
        check("0000:0b:00.0\n", Err("`0000:0b:00.0\\n`"));
    }
}
