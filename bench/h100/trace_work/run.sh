cd /tmp; python3 k.py; python3 p.py hatchet; python3 p.py trace
printf 'import torch\na=torch.randn(1024,1024,device="cuda")\ntorch.mm(a,a)\ntorch.cuda.synchronize()\n' > mm.py
ncu --version >> $OUT/log.txt 2>&1
ncu --launch-count 3 -f -o /tmp/mm python3 mm.py >> $OUT/log.txt 2>&1
cp /tmp/mm.ncu-rep $OUT/ncu_mm.ncu-rep; ncu --import /tmp/mm.ncu-rep --csv --page raw > $OUT/ncu_mm_raw.csv 2>>$OUT/log.txt
ls -la $OUT >> $OUT/log.txt
