using System.Buffers.Binary;
using System.IO.Compression;

namespace Deckhand.Platform;

/// <summary>
/// A 32-bit BGRA image (what Windows.Graphics.Capture and GDI give), top row
/// first, stride = width * 4. The screenshot pipeline: capture, redact (in
/// screen rectangles), crop to the region, scale down, encode PNG.
/// </summary>
public sealed class BgraImage
{
    public int Width { get; }

    public int Height { get; }

    public byte[] Pixels { get; }

    public BgraImage(int width, int height, byte[]? pixels = null)
    {
        if (width <= 0 || height <= 0) throw new ArgumentException("an image needs a positive size");
        Width = width;
        Height = height;
        Pixels = pixels ?? new byte[checked(width * height * 4)];
        if (Pixels.Length < width * height * 4) throw new ArgumentException("pixel buffer too small");
    }

    /// <summary>Copies rows out of a buffer with its own row pitch (a mapped texture, a DIB).</summary>
    public static BgraImage FromRows(ReadOnlySpan<byte> source, int width, int height, int pitch)
    {
        var img = new BgraImage(width, height);
        for (int y = 0; y < height; y++)
        {
            source.Slice(y * pitch, width * 4).CopyTo(img.Pixels.AsSpan(y * width * 4, width * 4));
        }
        return img;
    }

    /// <summary>Blacks out a rectangle given in image pixels (clipped); returns whether anything was covered.</summary>
    public bool FillBlack(PixelRect r)
    {
        var clipped = r.Intersect(new PixelRect(0, 0, Width, Height));
        if (clipped is not { } c) return false;
        for (int y = c.Y; y < c.Bottom; y++)
        {
            var row = Pixels.AsSpan((y * Width + c.X) * 4, c.Width * 4);
            for (int i = 0; i < row.Length; i += 4)
            {
                row[i] = 0;
                row[i + 1] = 0;
                row[i + 2] = 0;
                row[i + 3] = 255;
            }
        }
        return true;
    }

    public BgraImage Crop(PixelRect r)
    {
        var c = r.Intersect(new PixelRect(0, 0, Width, Height)) ?? throw new ArgumentException("the crop does not overlap the image");
        var img = new BgraImage(c.Width, c.Height);
        for (int y = 0; y < c.Height; y++)
        {
            Pixels.AsSpan(((c.Y + y) * Width + c.X) * 4, c.Width * 4).CopyTo(img.Pixels.AsSpan(y * c.Width * 4));
        }
        return img;
    }

    /// <summary>Scales down with a box filter (each output pixel the area average of the input pixels it covers).</summary>
    public BgraImage ScaleDown(int width, int height)
    {
        if (width >= Width && height >= Height) return this;
        var img = new BgraImage(width, height);
        double sx = Width / (double)width, sy = Height / (double)height;
        for (int oy = 0; oy < height; oy++)
        {
            int y0 = (int)(oy * sy), y1 = Math.Max(y0 + 1, Math.Min(Height, (int)Math.Ceiling((oy + 1) * sy)));
            for (int ox = 0; ox < width; ox++)
            {
                int x0 = (int)(ox * sx), x1 = Math.Max(x0 + 1, Math.Min(Width, (int)Math.Ceiling((ox + 1) * sx)));
                long b = 0, g = 0, r = 0, a = 0, n = 0;
                for (int y = y0; y < y1; y++)
                {
                    int p = (y * Width + x0) * 4;
                    for (int x = x0; x < x1; x++, p += 4)
                    {
                        b += Pixels[p];
                        g += Pixels[p + 1];
                        r += Pixels[p + 2];
                        a += Pixels[p + 3];
                        n++;
                    }
                }
                int q = (oy * width + ox) * 4;
                img.Pixels[q] = (byte)(b / n);
                img.Pixels[q + 1] = (byte)(g / n);
                img.Pixels[q + 2] = (byte)(r / n);
                img.Pixels[q + 3] = (byte)(a / n);
            }
        }
        return img;
    }

    /// <summary>
    /// Forces every alpha to opaque: a window capture's alpha is not
    /// meaningful (DWM leaves it 0 on some surfaces), and a PNG with alpha 0
    /// would show nothing.
    /// </summary>
    public void Opaque()
    {
        for (int i = 3; i < Pixels.Length; i += 4) Pixels[i] = 255;
    }
}

/// <summary>A minimal PNG writer: 8-bit RGB, no interlace, filter 0, zlib from the BCL.</summary>
public static class Png
{
    private static readonly byte[] Signature = { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A };
    private static readonly uint[] CrcTable = MakeCrcTable();

    public static byte[] Encode(BgraImage img)
    {
        using var ms = new MemoryStream();
        ms.Write(Signature);
        var ihdr = new byte[13];
        BinaryPrimitives.WriteUInt32BigEndian(ihdr.AsSpan(0), (uint)img.Width);
        BinaryPrimitives.WriteUInt32BigEndian(ihdr.AsSpan(4), (uint)img.Height);
        ihdr[8] = 8; // bit depth
        ihdr[9] = 2; // colour type: truecolour (RGB)
        ihdr[10] = 0; // deflate
        ihdr[11] = 0; // filter method 0
        ihdr[12] = 0; // no interlace
        WriteChunk(ms, "IHDR", ihdr);
        byte[] raw = new byte[img.Height * (1 + img.Width * 3)];
        int o = 0;
        for (int y = 0; y < img.Height; y++)
        {
            raw[o++] = 0; // filter: none
            int p = y * img.Width * 4;
            for (int x = 0; x < img.Width; x++, p += 4)
            {
                raw[o++] = img.Pixels[p + 2];
                raw[o++] = img.Pixels[p + 1];
                raw[o++] = img.Pixels[p];
            }
        }
        using (var z = new MemoryStream())
        {
            using (var zs = new ZLibStream(z, CompressionLevel.Fastest, leaveOpen: true))
            {
                zs.Write(raw);
            }
            WriteChunk(ms, "IDAT", z.ToArray());
        }
        WriteChunk(ms, "IEND", Array.Empty<byte>());
        return ms.ToArray();
    }

    private static void WriteChunk(Stream s, string type, byte[] data)
    {
        Span<byte> len = stackalloc byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(len, (uint)data.Length);
        s.Write(len);
        byte[] typeBytes = System.Text.Encoding.ASCII.GetBytes(type);
        s.Write(typeBytes);
        s.Write(data);
        uint crc = Crc(Crc(0xFFFFFFFFu, typeBytes), data) ^ 0xFFFFFFFFu;
        Span<byte> c = stackalloc byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(c, crc);
        s.Write(c);
    }

    /// <summary>CRC-32 (ISO-HDLC) update, as PNG chunks use it. Start with 0xFFFFFFFF and xor the end result with it.</summary>
    public static uint Crc(uint crc, ReadOnlySpan<byte> data)
    {
        foreach (byte b in data) crc = CrcTable[(crc ^ b) & 0xFF] ^ (crc >> 8);
        return crc;
    }

    private static uint[] MakeCrcTable()
    {
        var t = new uint[256];
        for (uint n = 0; n < 256; n++)
        {
            uint c = n;
            for (int k = 0; k < 8; k++) c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[n] = c;
        }
        return t;
    }
}
