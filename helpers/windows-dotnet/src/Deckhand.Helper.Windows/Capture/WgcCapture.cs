using System.Runtime.InteropServices;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Platform;
using Windows.Graphics.Capture;
using Windows.Graphics.DirectX;
using Windows.Graphics.DirectX.Direct3D11;
using WinRT;

namespace Deckhand.Helper.Windows.Capture;

/// <summary>
/// One frame of one window through Windows.Graphics.Capture: the window's
/// own pixels, whether or not another window covers it. The capture item
/// comes from IGraphicsCaptureItemInterop::CreateForWindow (the activation
/// factory of GraphicsCaptureItem, by RoGetActivationFactory), frames from a
/// free-threaded Direct3D11CaptureFramePool on a D3D11 device (hardware,
/// else WARP), and pixels by copying the frame's texture to a CPU-readable
/// staging texture. The D3D11 calls go through their vtables (slot numbers
/// from d3d11.h) to keep the helper free of a D3D wrapper package.
/// </summary>
internal static unsafe class WgcCapture
{
    private static readonly Guid IID_IGraphicsCaptureItemInterop = new("3628E81B-3CAC-4C60-B7F4-23CE0E0C3356");
    private static readonly Guid IID_IGraphicsCaptureItem = new("79C3F95B-31F7-4EC2-A464-632EF5D30760");
    private static readonly Guid IID_IDXGIDevice = new("54ec77fa-1377-44e6-8c32-88fd5f44c84c");
    private static readonly Guid IID_IDirect3DDxgiInterfaceAccess = new("A9B3D012-3DF2-4EE3-B8D1-8695F457D3C1");
    private static readonly Guid IID_ID3D11Texture2D = new("6f15aaf2-d208-4e89-9ab4-489535d34f9c");

    private const int D3D_DRIVER_TYPE_HARDWARE = 1, D3D_DRIVER_TYPE_WARP = 5;
    private const uint D3D11_CREATE_DEVICE_BGRA_SUPPORT = 0x20, D3D11_SDK_VERSION = 7;
    private const uint D3D11_USAGE_STAGING = 3, D3D11_CPU_ACCESS_READ = 0x20000, D3D11_MAP_READ = 1;

    [StructLayout(LayoutKind.Sequential)]
    private struct D3D11_TEXTURE2D_DESC
    {
        public uint Width, Height, MipLevels, ArraySize, Format, SampleCount, SampleQuality, Usage, BindFlags, CPUAccessFlags, MiscFlags;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct D3D11_MAPPED_SUBRESOURCE
    {
        public void* pData;
        public uint RowPitch;
        public uint DepthPitch;
    }

    [DllImport("d3d11.dll", ExactSpelling = true)]
    private static extern int D3D11CreateDevice(nint adapter, int driverType, nint software, uint flags, int* featureLevels, uint levels, uint sdkVersion, out nint device, out int featureLevel, out nint context);

    [DllImport("d3d11.dll", ExactSpelling = true)]
    private static extern int CreateDirect3D11DeviceFromDXGIDevice(nint dxgiDevice, out nint graphicsDevice);

    public static bool IsSupported() => GraphicsCaptureSession.IsSupported();

    /// <summary>Entry <paramref name="index"/> of a COM object's vtable.</summary>
    private static void* Slot(nint obj, int index) => (void*)Marshal.ReadIntPtr(Marshal.ReadIntPtr(obj), index * IntPtr.Size);

    /// <summary>Captures the window; null when no frame came before the timeout (a minimized window gives none).</summary>
    public static BgraImage? Capture(nint hwnd, TimeSpan timeout)
    {
        nint device = 0, context = 0;
        try
        {
            (device, context) = CreateDevice();
            var d3dDevice = WrapDevice(device);
            var item = CreateItem(hwnd);
            var size = item.Size;
            if (size.Width <= 0 || size.Height <= 0) return null;
            using var pool = Direct3D11CaptureFramePool.CreateFreeThreaded(d3dDevice, DirectXPixelFormat.B8G8R8A8UIntNormalized, 1, size);
            using var session = pool.CreateCaptureSession(item);
            session.IsCursorCaptureEnabled = false;
            session.StartCapture();
            var clock = System.Diagnostics.Stopwatch.StartNew();
            while (clock.Elapsed < timeout)
            {
                using var frame = pool.TryGetNextFrame();
                if (frame is not null)
                {
                    return Read(device, context, frame.Surface, frame.ContentSize.Width, frame.ContentSize.Height);
                }
                Thread.Sleep(10);
            }
            return null;
        }
        finally
        {
            if (context != 0) Marshal.Release(context);
            if (device != 0) Marshal.Release(device);
        }
    }

    private static (nint Device, nint Context) CreateDevice()
    {
        int hr = D3D11CreateDevice(0, D3D_DRIVER_TYPE_HARDWARE, 0, D3D11_CREATE_DEVICE_BGRA_SUPPORT, null, 0, D3D11_SDK_VERSION, out nint device, out _, out nint context);
        if (hr < 0)
        {
            // No GPU (a VM, a hosted runner): the WARP software rasteriser.
            hr = D3D11CreateDevice(0, D3D_DRIVER_TYPE_WARP, 0, D3D11_CREATE_DEVICE_BGRA_SUPPORT, null, 0, D3D11_SDK_VERSION, out device, out _, out context);
        }
        Marshal.ThrowExceptionForHR(hr);
        return (device, context);
    }

    private static IDirect3DDevice WrapDevice(nint device)
    {
        var iid = IID_IDXGIDevice;
        Marshal.ThrowExceptionForHR(Marshal.QueryInterface(device, ref iid, out nint dxgi));
        try
        {
            Marshal.ThrowExceptionForHR(CreateDirect3D11DeviceFromDXGIDevice(dxgi, out nint inspectable));
            try
            {
                return MarshalInterface<IDirect3DDevice>.FromAbi(inspectable);
            }
            finally
            {
                Marshal.Release(inspectable);
            }
        }
        finally
        {
            Marshal.Release(dxgi);
        }
    }

    private static GraphicsCaptureItem CreateItem(nint hwnd)
    {
        const string className = "Windows.Graphics.Capture.GraphicsCaptureItem";
        Marshal.ThrowExceptionForHR(Win32.WindowsCreateString(className, (uint)className.Length, out nint hstring));
        nint factory;
        try
        {
            Marshal.ThrowExceptionForHR(Win32.RoGetActivationFactory(hstring, IID_IGraphicsCaptureItemInterop, out factory));
        }
        finally
        {
            Win32.WindowsDeleteString(hstring);
        }
        try
        {
            // IGraphicsCaptureItemInterop::CreateForWindow(HWND, REFIID, void**): vtable slot 3.
            var createForWindow = (delegate* unmanaged[Stdcall]<nint, nint, Guid*, nint*, int>)Slot(factory, 3);
            Guid iid = IID_IGraphicsCaptureItem;
            nint itemPtr;
            Marshal.ThrowExceptionForHR(createForWindow(factory, hwnd, &iid, &itemPtr));
            try
            {
                return GraphicsCaptureItem.FromAbi(itemPtr);
            }
            finally
            {
                Marshal.Release(itemPtr);
            }
        }
        finally
        {
            Marshal.Release(factory);
        }
    }

    private static BgraImage Read(nint device, nint context, IDirect3DSurface surface, int contentWidth, int contentHeight)
    {
        nint surfacePtr = MarshalInterface<IDirect3DSurface>.FromManaged(surface);
        nint access = 0, texture = 0, staging = 0;
        try
        {
            var accessIid = IID_IDirect3DDxgiInterfaceAccess;
            Marshal.ThrowExceptionForHR(Marshal.QueryInterface(surfacePtr, ref accessIid, out access));
            // IDirect3DDxgiInterfaceAccess::GetInterface(REFIID, void**): slot 3.
            var getInterface = (delegate* unmanaged[Stdcall]<nint, Guid*, nint*, int>)Slot(access, 3);
            Guid texIid = IID_ID3D11Texture2D;
            Marshal.ThrowExceptionForHR(getInterface(access, &texIid, &texture));

            // ID3D11Texture2D::GetDesc: slot 10 (IUnknown 3, ID3D11DeviceChild 4, ID3D11Resource 3).
            D3D11_TEXTURE2D_DESC desc;
            ((delegate* unmanaged[Stdcall]<nint, D3D11_TEXTURE2D_DESC*, void>)Slot(texture, 10))(texture, &desc);
            desc.Usage = D3D11_USAGE_STAGING;
            desc.BindFlags = 0;
            desc.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
            desc.MiscFlags = 0;
            desc.MipLevels = 1;
            desc.ArraySize = 1;
            desc.SampleCount = 1;
            desc.SampleQuality = 0;
            // ID3D11Device::CreateTexture2D: slot 5.
            Marshal.ThrowExceptionForHR(((delegate* unmanaged[Stdcall]<nint, D3D11_TEXTURE2D_DESC*, void*, nint*, int>)Slot(device, 5))(device, &desc, null, &staging));
            // ID3D11DeviceContext::CopyResource: slot 47; Map: 14; Unmap: 15.
            ((delegate* unmanaged[Stdcall]<nint, nint, nint, void>)Slot(context, 47))(context, staging, texture);
            D3D11_MAPPED_SUBRESOURCE mapped;
            Marshal.ThrowExceptionForHR(((delegate* unmanaged[Stdcall]<nint, nint, uint, uint, uint, D3D11_MAPPED_SUBRESOURCE*, int>)Slot(context, 14))(context, staging, 0, D3D11_MAP_READ, 0, &mapped));
            try
            {
                int width = Math.Min(contentWidth, (int)desc.Width);
                int height = Math.Min(contentHeight, (int)desc.Height);
                var span = new ReadOnlySpan<byte>(mapped.pData, checked((int)(mapped.RowPitch * (uint)height)));
                var img = BgraImage.FromRows(span, width, height, (int)mapped.RowPitch);
                img.Opaque();
                return img;
            }
            finally
            {
                ((delegate* unmanaged[Stdcall]<nint, nint, uint, void>)Slot(context, 15))(context, staging, 0);
            }
        }
        finally
        {
            if (staging != 0) Marshal.Release(staging);
            if (texture != 0) Marshal.Release(texture);
            if (access != 0) Marshal.Release(access);
            Marshal.Release(surfacePtr);
        }
    }
}
