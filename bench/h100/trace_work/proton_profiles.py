import os,sys,torch,triton,triton.language as tl,triton.profiler as proton
mode=sys.argv[1];O=os.environ["OUT"]
L=open(O+"/log.txt","a")
def meta(grid,kernel,args):
    n=args["n"];return {"name":f"add_n{n}","flops32":float(n),"bytes":12*n}
@triton.jit(launch_metadata=meta)
def add(x,y,z,n,BLOCK:tl.constexpr):
    i=tl.program_id(0)*BLOCK+tl.arange(0,BLOCK);m=i<n
    tl.store(z+i,tl.load(x+i,mask=m)+tl.load(y+i,mask=m),mask=m)
x=torch.randn(1<<24,device="cuda");y=torch.randn_like(x);z=torch.empty_like(x)
def run(n):add[(triton.cdiv(n,1024),)](x,y,z,n,BLOCK=1024)
run(1<<20);torch.cuda.synchronize()
kw={"hook":"triton"}
if mode=="trace":kw["data"]="trace"
try:proton.start(O+"/proton_"+mode,**kw)
except Exception as e:print(triton.__version__,mode,"start failed",repr(e),file=L,flush=True);sys.exit()
for s,n in [("small",1<<20),("large",1<<24)]:
    with proton.scope(s):
        for _ in range(3):run(n)
    torch.mm(x[:1<<20].view(1024,1024),y[:1<<20].view(1024,1024))
torch.cuda.synchronize();proton.finalize()
print(triton.__version__,mode,"ok",os.listdir(O),file=L,flush=True)
