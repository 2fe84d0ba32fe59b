import zlib from 'node:zlib';

/** One entry of a hand-built ZIP; every field a hostile archive might lie about can be set. */
export interface RawEntry {
  name: string | Buffer;
  data?: Buffer;
  /** 8 deflates `data`; 0 stores it. */
  method?: 0 | 8;
  /** Overrides of what the headers declare. */
  crc?: number;
  uncompressedSize?: number;
  flags?: number;
  /** Unix mode (file type and permissions) put in the external attributes, with "made by Unix". */
  unixMode?: number;
}

/**
 * Writes a ZIP byte by byte (local headers, data, central directory, end record), with a ZIP64 extra field when a
 * declared size does not fit 32 bits. Test code only: the service writes archives with yazl and reads them with yauzl.
 */
export function rawZip(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name, 'utf8');
    const data = e.data ?? Buffer.alloc(0);
    const method = e.method ?? 0;
    const body = method === 8 ? zlib.deflateRawSync(data) : data;
    const crc = e.crc ?? zlib.crc32(data);
    const size = e.uncompressedSize ?? data.length;
    const zip64 = size > 0xfffffffe;
    const flags = (e.flags ?? 0) | (Buffer.isBuffer(e.name) ? 0 : 0x800);
    const extra = zip64 ? Buffer.alloc(20) : Buffer.alloc(0);
    if (zip64) {
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(16, 2);
      extra.writeBigUInt64LE(BigInt(size), 4);
      extra.writeBigUInt64LE(BigInt(body.length), 12);
    }
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(zip64 ? 45 : 20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(zip64 ? 0xffffffff : body.length, 18);
    local.writeUInt32LE(zip64 ? 0xffffffff : size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(extra.length, 28);
    parts.push(local, name, extra, body);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE((3 << 8) | 45, 4);
    cd.writeUInt16LE(zip64 ? 45 : 20, 6);
    cd.writeUInt16LE(flags, 8);
    cd.writeUInt16LE(method, 10);
    cd.writeUInt32LE(crc >>> 0, 16);
    cd.writeUInt32LE(zip64 ? 0xffffffff : body.length, 20);
    cd.writeUInt32LE(zip64 ? 0xffffffff : size, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt16LE(extra.length, 30);
    cd.writeUInt32LE(((e.unixMode ?? 0o100644) << 16) >>> 0, 38);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name, extra);
    offset += local.length + name.length + extra.length + body.length;
  }
  const cdBuf = Buffer.concat(central);
  const many = entries.length > 0xfffe;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(many ? 0xffff : entries.length, 8);
  end.writeUInt16LE(many ? 0xffff : entries.length, 10);
  end.writeUInt32LE(cdBuf.length, 12);
  end.writeUInt32LE(offset, 16);
  if (!many) return Buffer.concat([...parts, cdBuf, end]);
  // More entries than 16 bits hold: a ZIP64 end record and its locator carry the count.
  const end64 = Buffer.alloc(56);
  end64.writeUInt32LE(0x06064b50, 0);
  end64.writeBigUInt64LE(44n, 4);
  end64.writeUInt16LE(45, 12);
  end64.writeUInt16LE(45, 14);
  end64.writeBigUInt64LE(BigInt(entries.length), 24);
  end64.writeBigUInt64LE(BigInt(entries.length), 32);
  end64.writeBigUInt64LE(BigInt(cdBuf.length), 40);
  end64.writeBigUInt64LE(BigInt(offset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(offset + cdBuf.length), 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([...parts, cdBuf, end64, locator, end]);
}
