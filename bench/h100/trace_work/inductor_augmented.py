import os,sys,gzip,shutil,subprocess
O=os.environ["OUT"];os.chdir("/tmp")
import torch
L=open(O+"/log.txt","a")
def log(*a):print(*a,file=L,flush=True)
log(torch.__version__,torch.cuda.get_device_name(0))
import torch._inductor.config as ic
ic.benchmark_kernel=True
from torch.profiler import profile,ProfilerActivity as A
d="cuda";torch.manual_seed(0)
a=torch.randn(2048,4096,device=d,dtype=torch.bfloat16);b=torch.randn(4096,1024,device=d,dtype=torch.bfloat16)
c=torch.randn(1024,1024,device=d);bias=torch.randn(1024,device=d)
def f(x):return torch.relu(x)*2+1
cf=torch.compile(f)
def step():torch.mm(a,b);torch.addmm(bias,c,c);cf(c)
for _ in range(2):step()
torch.cuda.synchronize()
with profile(activities=[A.CPU,A.CUDA],record_shapes=True) as p:
    for _ in range(3):step()
    torch.cuda.synchronize()
p.export_chrome_trace("plain.json")
r=subprocess.run([sys.executable,"-m","torch._inductor.analysis.profile_analysis","--augment_trace","plain.json","aug.json","bfloat16"],capture_output=True,text=True)
log("augment rc",r.returncode,r.stdout[-1500:],r.stderr[-3000:])
for n,m in [("plain.json","kineto_inductor_plain.json.gz"),("aug.json","kineto_inductor_augmented.json.gz")]:
    if os.path.exists(n):
        with open(n,"rb") as i,gzip.open(O+"/"+m,"wb") as o:shutil.copyfileobj(i,o)
